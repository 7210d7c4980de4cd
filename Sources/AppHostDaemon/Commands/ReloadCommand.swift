import AppHost
import AppHostSupport
import AppHostSystemd
import Glibc

/// `apphostd reload`: asks the running daemon to reload (SIGHUP) and waits for the answer to
/// that request, for the unit's `ExecReload=`. systemd 252 judges a reload by this command's exit
/// status, so a refused config fails `systemctl reload` and needs no procps (`/bin/kill`).
///
/// The daemon records how each reload ended in its state directory (`ReloadRecord`); the
/// command watches the directory (inotify) until a record of a reload taken after its signal
/// appears, and gives up when the daemon exits or the timeout passes.
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
    /// 64 for a missing or bad PID, 1 when the daemon cannot be signalled, exits, does not
    /// reload (it was stopping) or does not answer in time.
    func run() -> ExitStatus {
        let name = ApphostdCommand.name
        guard let text = pid ?? ProcessEnvironment.current["MAINPID"], let target = pid_t(text), target > 0 else {
            StandardError.write("\(name): reload needs the daemon's PID: --pid PID (systemd sets $MAINPID for ExecReload=)\n")
            return .usage
        }
        let directories = Self.stateDirectories(option: stateDirectory, config: config)
        let watch = inotify_init1(Int32(IN_CLOEXEC))
        guard watch >= 0 else {
            StandardError.write("\(name): cannot watch for the daemon's answer: \(SystemErrorText.describe(errno))\n")
            return .launchFailed
        }
        defer { close(watch) }
        let watched = directories.filter { inotify_add_watch(watch, $0, UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE)) >= 0 }
        guard !watched.isEmpty else {
            StandardError.write("\(name): cannot watch the state directory \(directories.joined(separator: " or ")): \(SystemErrorText.describe(errno)) (pass --state-directory)\n")
            return .launchFailed
        }
        let sentAt = SystemdNotifier.monotonicMicroseconds()
        guard kill(target, SIGHUP) == 0 else {
            StandardError.write("\(name): cannot signal \(target): \(SystemErrorText.describe(errno))\n")
            return .launchFailed
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let record = watched.lazy.compactMap({ ReloadRecord.read(from: $0) }).first(where: { $0.answers(sentAt: sentAt) }) {
                return Self.report(record, name: name)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                StandardError.write("\(name): \(target) did not answer the reload within \(timeout.configText) (no new \(ReloadRecord.fileName) in \(watched.joined(separator: " or ")))\n")
                return .launchFailed
            }
            // Wakes on the record's rename; at least once a second to see whether the daemon
            // is still there to answer.
            var descriptor = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(1000, left.wholeMicroseconds / 1000 + 1))
            if poll(&descriptor, 1, milliseconds) > 0 {
                var events = [UInt8](repeating: 0, count: 4096)
                _ = events.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            } else if Self.hasExited(target) {
                StandardError.write("\(name): \(target) exited before it answered the reload\n")
                return .launchFailed
            }
        }
    }

    /// Whether `pid` is gone, or a zombie nobody reaped yet (it will never answer either).
    static func hasExited(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0, errno == ESRCH { return true }
        guard let stat = try? AtomicFile.read("/proc/\(pid)/stat") else { return false }
        // "PID (COMMAND) STATE ...": the state follows the last ')'.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")), close + 2 < stat.count else { return false }
        return stat[close + 2] == UInt8(ascii: "Z")
    }

    private static func report(_ record: ReloadRecord, name: String) -> ExitStatus {
        switch record.outcome {
        case .applied:
            // Under systemd's ExecReload= stdout is the journal, where the daemon said the same
            // line already; by hand, the operator reads it here.
            if !JournalLogHandler.isJournalStream(environment: ProcessEnvironment.current, fd: STDOUT_FILENO) {
                print(record.message)
            }
            return .clean
        case .refused:
            StandardError.write("\(name): the reload was refused; the running configuration stays:\n")
            for line in record.message.split(separator: "\n") { StandardError.write("\(line)\n") }
            return .badConfiguration
        case .notApplied:
            StandardError.write("\(name): the daemon did not reload: \(record.message)\n")
            return .launchFailed
        }
    }

    /// Where the daemon may record its reloads: `--state-directory`; else the one the config
    /// names (when it loads) and the daemon's default (`$STATE_DIRECTORY` under systemd), since
    /// the config on disk may be the broken one being reloaded.
    static func stateDirectories(option: String?, config: String?) -> [String] {
        if let option { return [option] }
        let environment = ProcessEnvironment.current
        let identity = ApphostdCommand.identity()
        var directories: [String] = []
        if let found = try? AnalyticsCommand.stateDirectory(
            stateDirectory: nil, config: config, environment: environment,
            registry: ApphostdCommand.registry(), identity: identity
        ) {
            directories.append(found.directory)
        }
        let fallback = ConfigurationLoader.defaultStateDirectory(environment: environment, name: identity.stateDirectoryName)
        if !directories.contains(fallback) { directories.append(fallback) }
        return directories
    }
}
