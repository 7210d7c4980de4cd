import AppHost
import AppHostSupport
import AppHostSystemd
import CApphostdPrelude
import Glibc
import Logging
import ServiceLifecycle

// The edge's libsystemd calls with an environment of the test's: sd_notify, sd_watchdog_enabled
// and sd_listen_fds read the process's, so the tests run this program with theirs.
//
//   apphost-systemd-probe notify STEP...      one notifier call per step (below); prints
//                                             "enabled" or "disabled", then "sent" or "not sent"
//                                             per step
//   apphost-systemd-probe watchdog            what sd_watchdog_enabled made of the environment
//   apphost-systemd-probe listen-fds          what the prelude took with sd_listen_fds_with_names
//   apphost-systemd-probe fd-store NAME FILE...  FileDescriptorStore's summary, then keeps the
//                                             restorable state encoded in each FILE ("kept", or
//                                             the error)
//   apphost-systemd-probe host OPTION...      a host and its SystemdNotifyEdge, driven by
//                                             lines on stdin (below); "ok" after each
//   apphost-systemd-probe composition PART...  SystemdIntegration's services for a host, one
//                                             line each: name, on success, on failure; PART:
//                                             no-bus, no-logind, no-memory-pressure, metrics,
//                                             restorable, other
//
// notify steps: ready:STATUS, status:TEXT, stopping:STATUS, reloading:STATUS, extend-ms:N,
// launch-failed:ERRNO:STATUS, ping, trigger:STATUS, send:KEY=VALUE|KEY=VALUE...
//
// host options: --service idle|hang|fails-on-update, --waiting-for NAME (repeatable),
// --ready-early NAME, --watchdog, --hook-deadline-ms N, --stall-limit-ms N.
// host input lines: mark NAME, background, foreground, reload INTERVAL, terminate.

/// One line on stdout, written at once (the test reads it as it comes).
func output(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { return }
        offset += written
    }
}

func notify(_ steps: ArraySlice<String>) -> Int32 {
    let notifier = SystemdNotifier()
    output(notifier.isEnabled ? "enabled" : "disabled")
    for step in steps {
        let parts = step.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let argument = parts.count > 1 ? parts[1] : ""
        var sent: Bool?
        switch parts[0] {
        case "ready": notifier.ready(status: argument)
        case "status": notifier.status(argument)
        case "stopping": notifier.stopping(status: argument)
        case "reloading": notifier.reloading(status: argument)
        case "extend-ms": notifier.extendTimeout(by: .milliseconds(Int(argument) ?? 0))
        case "launch-failed":
            let rest = argument.split(separator: ":", maxSplits: 1).map(String.init)
            notifier.launchFailed(status: rest.count > 1 ? rest[1] : "", errno: Int32(rest[0]) ?? 0)
        case "ping": notifier.watchdogPing()
        case "trigger": notifier.watchdogTrigger(status: argument)
        case "send":
            let fields = argument.split(separator: "|").map { field -> (String, String) in
                let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
            }
            sent = notifier.send(fields)
        default:
            output("unknown step \(step)")
            return 2
        }
        output(sent.map { $0 ? "sent" : "not sent" } ?? "done")
    }
    return 0
}

func watchdog() -> Int32 {
    do {
        guard let settings = try WatchdogSettings.fromEnvironment() else {
            output("none")
            return 0
        }
        output("timeout-us=\(settings.timeout.wholeMicroseconds) interval-us=\(settings.pingInterval.wholeMicroseconds) below-floor=\(settings.isBelowFloor)")
    } catch {
        output("error: \(error)")
    }
    return 0
}

func listenFDs() -> Int32 {
    let names = apphostd_prelude_listen_fd_names().map { String(cString: $0) } ?? "-"
    output("count=\(apphostd_prelude_listen_fds()) names=\(names)")
    for fd in 3..<(3 + apphostd_prelude_listen_fds()) {
        output("fd \(fd) cloexec=\(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)")
    }
    output("LISTEN_FDS=\(getenv("LISTEN_FDS").map { String(cString: $0) } ?? "-") LISTEN_FDNAMES=\(getenv("LISTEN_FDNAMES").map { String(cString: $0) } ?? "-")")
    return 0
}

func fileDescriptorStore(_ arguments: ArraySlice<String>) -> Int32 {
    guard let name = arguments.first else { return 2 }
    let store = FileDescriptorStore(name: name)
    output("enabled=\(store.isEnabled) summary=\(store.summary)")
    for path in arguments.dropFirst() {
        var bytes: [UInt8] = []
        if let file = fopen(path, "rb") {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            fclose(file)
        }
        do {
            try store.keep(try RestorableState(decoding: bytes))
            output("kept")
        } catch {
            output("error: \(error)")
        }
    }
    return 0
}

/// The group SystemdIntegration makes, with or without each part: the signal edge it builds
/// blocks and reads the process's signals, which a test runner's own process must not.
func composition(_ parts: ArraySlice<String>) throws -> Int32 {
    let logger = Logger(label: "probe")
    let systemd = try SystemdIntegration(logger: logger)
    defer { systemd.close() }
    let host = try PluggableApplicationHost(services: [], logger: logger)
    var options = SystemdIntegration.Options(name: "probe")
    if parts.contains("no-bus") { options.busName = nil }
    if parts.contains("no-logind") { options.followsLogind = false }
    if parts.contains("no-memory-pressure") { options.memoryPressure = nil }
    if parts.contains("no-time-changes") { options.followsTimeChanges = false }
    if parts.contains("no-network") { options.networkPathSource = nil }
    if parts.contains("no-power") { options.followsPowerState = false }
    if parts.contains("metrics") { options.metrics = MetricsTextfileEdge(path: "/nonexistent/probe.prom", daemon: "probe", logger: logger) }
    if parts.contains("restorable") { options.restorableState = RestorableStateFiles(directory: "/nonexistent", logger: logger) }
    let others: [ServiceGroupConfiguration.ServiceConfiguration] = parts.contains("other") ? [.init(service: host, serviceName: "other")] : []
    for service in try systemd.services(for: host, options: options, with: others) {
        output("\(service.serviceName) \(service.successTerminationBehavior) \(service.failureTerminationBehavior)")
    }
    return 0
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "composition": exit(try composition(arguments.dropFirst()))
case "notify": exit(notify(arguments.dropFirst()))
case "watchdog": exit(watchdog())
case "listen-fds": exit(listenFDs())
case "fd-store": exit(fileDescriptorStore(arguments.dropFirst()))
case "host": exit(await ProbeHost(arguments: Array(arguments.dropFirst())).run())
default:
    output("usage: apphost-systemd-probe notify|watchdog|listen-fds|fd-store|host|composition ...")
    exit(2)
}
