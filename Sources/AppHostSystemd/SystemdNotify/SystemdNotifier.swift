import AppHostSupport
import CSystemd
import Glibc

/// Tells systemd where the daemon stands (`sd_notify`): readiness, status line, reload, stop,
/// timeouts, watchdog pings.
///
/// libsystemd reads `$NOTIFY_SOCKET` from the process environment at every call. Without it (not
/// started by systemd as `Type=notify`) every call is a no-op, so the daemon runs the same
/// outside systemd.
public struct SystemdNotifier: Sendable {
    /// A notifier for the process's `$NOTIFY_SOCKET`.
    public init() {}

    /// Whether notifications go anywhere: `$NOTIFY_SOCKET` is set and not empty.
    public var isEnabled: Bool {
        guard let socket = getenv("NOTIFY_SOCKET") else { return false }
        return socket.pointee != 0
    }

    /// Sends the fields as one datagram of `KEY=value` lines. Newlines inside values become spaces,
    /// because the protocol is line-based. Returns whether the datagram was sent.
    @discardableResult
    public func send(_ fields: KeyValuePairs<String, String>) -> Bool {
        send(fields.map { ($0.key, $0.value) })
    }

    /// Sends the fields as one datagram of `KEY=value` lines, in the given order.
    @discardableResult
    public func send(_ fields: [(String, String)]) -> Bool {
        sd_notify(0, Self.datagram(fields)) > 0
    }

    /// `READY=1` with a fresh status: launch or reload finished.
    public func ready(status: String) {
        send([("READY", "1"), ("STATUS", status)])
    }

    /// A new `STATUS=` line, shown by `systemctl status`.
    public func status(_ text: String) {
        send([("STATUS", text)])
    }

    /// `STOPPING=1` before terminate, so systemd knows the stop was ours.
    public func stopping(status: String) {
        send([("STOPPING", "1"), ("STATUS", status)])
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (CLOCK_MONOTONIC, as systemd requires for
    /// `Type=notify-reload`) at the start of a reload; end it with `ready(status:)`.
    public func reloading(status: String) {
        send([
            ("RELOADING", "1"),
            ("MONOTONIC_USEC", String(Self.monotonicMicroseconds())),
            ("STATUS", status),
        ])
    }

    /// `EXTEND_TIMEOUT_USEC=`: asks systemd for this much more time from now while a long launch
    /// or terminate is still progressing.
    public func extendTimeout(by duration: Duration) {
        send([("EXTEND_TIMEOUT_USEC", String(duration.wholeMicroseconds))])
    }

    /// A failed launch: `STATUS=` naming the cause and `ERRNO=` for `systemctl status`.
    public func launchFailed(status: String, errno: Int32) {
        send([("STATUS", status), ("ERRNO", String(errno))])
    }

    /// `WATCHDOG=1`: the host's event path is alive.
    public func watchdogPing() {
        send([("WATCHDOG", "1")])
    }

    /// `WATCHDOG=trigger` (systemd 243+) with a `STATUS=` saying why: the host is unhealthy, and
    /// systemd should apply the unit's watchdog action now rather than when the pings run out.
    public func watchdogTrigger(status: String) {
        send([("STATUS", status), ("WATCHDOG", "trigger")])
    }

    /// The datagram text: `KEY=value` lines joined with newlines.
    static func datagram(_ fields: [(String, String)]) -> String {
        fields.map { key, value in "\(key)=\(singleLine(value))" }.joined(separator: "\n")
    }

    /// `value` with each line break (`\n` or `\r\n`) turned into a space. Pure Swift on purpose:
    /// this runs for every `STATUS=`, and Foundation's `replacingOccurrences` goes through
    /// `NSString` on Linux.
    static func singleLine(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "\n")) else { return value }
        return String(value.map { $0 == "\n" || $0 == "\r\n" ? " " : $0 })
    }

    /// CLOCK_MONOTONIC now, in microseconds.
    package static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
