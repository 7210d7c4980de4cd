import AppHost
import AppHostSystemd
import Glibc

/// `apphostd reload`: asks the running daemon to reload (SIGHUP) and waits for the answer to
/// that request, for the unit's `ExecReload=`. systemd 252 judges a reload by this command's exit
/// status, so a refused config fails `systemctl reload` and needs no procps (`/bin/kill`).
///
/// The daemon records how each reload ended in its state directory (`ReloadRecord`); the
/// command watches the directory (inotify, no polling) until a record of a reload taken after its
/// signal appears.
struct ReloadCommand {
    /// `--pid`: the daemon; `$MAINPID` by default, which systemd sets for `ExecReload=`.
    let pid: String?
    /// `--config`: take the state directory from this config file.
    let config: String?
    /// `--state-directory`: where the daemon records its reloads.
    let stateDirectory: String?
    /// How long to wait for the answer; below the unit's `TimeoutStartSec=`, which bounds a reload.
    var timeout: Duration = .seconds(80)

    /// 0 when the daemon applied the new config, 78 when it refused it (the reasons on stderr),
    /// 64 for a missing or bad PID, 1 when the daemon cannot be signalled or does not answer.
    func run() -> ExitStatus {
        let name = ApphostdCommand.name
        guard let text = pid ?? ProcessEnvironment.current["MAINPID"], let target = pid_t(text), target > 0 else {
            StandardError.write("\(name): reload needs the daemon's PID: --pid PID (systemd sets $MAINPID for ExecReload=)\n")
            return .usage
        }
        let directory = Self.stateDirectory(option: stateDirectory, config: config)
        let watch = inotify_init1(Int32(IN_CLOEXEC))
        guard watch >= 0 else {
            StandardError.write("\(name): cannot watch \(directory): \(SystemErrorText.describe(errno))\n")
            return .launchFailed
        }
        defer { close(watch) }
        guard inotify_add_watch(watch, directory, UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE)) >= 0 else {
            StandardError.write("\(name): cannot watch the state directory \(directory): \(SystemErrorText.describe(errno)) (pass --state-directory)\n")
            return .launchFailed
        }
        let sentAt = SystemdNotifier.monotonicMicroseconds()
        guard kill(target, SIGHUP) == 0 else {
            StandardError.write("\(name): cannot signal \(target): \(SystemErrorText.describe(errno))\n")
            return .launchFailed
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let record = ReloadRecord.read(from: directory), record.takenAt >= sentAt {
                if record.isApplied {
                    print(record.message)
                    return .clean
                }
                StandardError.write("\(name): the reload was refused; the running configuration stays:\n")
                for line in record.message.split(separator: "\n") { StandardError.write("\(line)\n") }
                return .badConfiguration
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                StandardError.write("\(name): \(target) did not answer the reload within \(timeout.configText) (no new \(ReloadRecord.fileName) in \(directory))\n")
                return .launchFailed
            }
            var descriptor = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(Int64(Int32.max), left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            if poll(&descriptor, 1, milliseconds) > 0 {
                var events = [UInt8](repeating: 0, count: 4096)
                _ = events.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            }
        }
    }

    /// `--state-directory`; else the one the config names; else the daemon's default
    /// (`$STATE_DIRECTORY` under systemd), also when the config is the broken one being reloaded.
    static func stateDirectory(option: String?, config: String?) -> String {
        if let option { return option }
        let environment = ProcessEnvironment.current
        let identity = ApphostdCommand.identity()
        if let found = try? AnalyticsCommand.stateDirectory(
            stateDirectory: nil, config: config, environment: environment,
            registry: ApphostdCommand.registry(), identity: identity
        ) {
            return found.directory
        }
        return ConfigurationLoader.defaultStateDirectory(environment: environment, name: identity.stateDirectoryName)
    }
}
