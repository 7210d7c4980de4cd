import Glibc
import Logging
import ServiceLifecycle

/// `org.freedesktop.LogControl1` on the bus, as systemd's own daemons have it, so that
/// `systemctl service-log-level UNIT [LEVEL]` and `systemctl service-log-target UNIT [TARGET]`
/// (systemd 247+) read and change the daemon's log level and target live. Run it in the
/// daemon's `ServiceGroup`.
///
/// sd-bus serves the object (an sd-bus vtable, `LogControlProperties`) on the edge's event loop,
/// and checks a writer's privilege as in systemd's daemons: root or the daemon's own user on the
/// system bus, anyone on a user's bus, which only its user can reach. It owns a well-known name
/// (the unit's `BusName=`, which systemctl reads) on the bus `sd_bus_open` picks for the process.
/// `LogLevel` takes systemd's names (`debug`, `info`, `notice`, `warning`, `err`, `crit`, `alert`,
/// `emerg`, or 0–7) and sets `LogLevelControl.level`; `LogTarget` takes `console`, `journal`,
/// `auto` and `null`. Without a bus, or without the right to the name, the daemon runs on and the
/// log says once why. When the bus goes away (`systemctl restart dbus`), one line says so, the
/// connection is made again, and one line says when log control is back.
public struct LogControlEdge: Service {
    /// The well-known name it owns (`BusName=` in the unit).
    public let busName: String
    /// `SyslogIdentifier`: the daemon's journal identifier.
    public let identifier: String
    let control: LogLevelControl
    let bus: AppHostSystemd.DBusAddress
    let logger: Logger
    /// The edge's loop; nil: a loop of its own.
    let loop: EdgeEventLoop?

    /// A service that owns `busName` and serves `control` through it, on an event loop of its own.
    public init(busName: String, identifier: String, control: LogLevelControl = .shared, bus: AppHostSystemd.DBusAddress = .default, logger: Logger) {
        self.init(busName: busName, identifier: identifier, control: control, bus: bus, logger: logger, on: nil)
    }

    /// Like `init(busName:identifier:control:bus:logger:)`, on `loop` (the daemon's edge loop).
    package init(busName: String, identifier: String, control: LogLevelControl = .shared, bus: AppHostSystemd.DBusAddress = .default, logger: Logger, on loop: EdgeEventLoop?) {
        self.busName = busName
        self.identifier = identifier
        self.control = control
        self.bus = bus
        self.logger = logger
        self.loop = loop
    }

    /// `org.apphost.<name>` for a daemon's command name (`apphostd` → `org.apphost.apphostd`):
    /// each daemon of its own name owns a name of its own. Characters a bus name cannot hold
    /// become `_`.
    public static func busName(commandName: String) -> String {
        var element = String(commandName.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-") ? Character(scalar) : "_"
        })
        if element.first.map({ ("0"..."9").contains($0) }) ?? true { element = "_" + element }
        return "org.apphost." + element
    }

    /// Serves the interface until graceful shutdown or cancellation. The connection lives on
    /// the event loop, which sleeps without a timer: an idle daemon's bus costs no wake-up.
    public func run() async {
        await HostDBusEdge(busName: busName, identifier: identifier, host: nil, control: control, bus: bus, logger: logger, on: loop).run()
    }
}
