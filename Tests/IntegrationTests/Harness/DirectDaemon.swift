import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// apphostd started directly (no systemd), with default signal dispositions and an empty mask,
/// output to a log file.
final class DirectDaemon {
    /// How the process ended.
    enum Ending: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        var description: String {
            switch self {
            case .exited(let code): "exited \(code)"
            case .signaled(let signal): "killed by signal \(signal)"
            }
        }
    }

    let pid: pid_t
    private var exitStatus: Ending?

    private init(pid: pid_t) {
        self.pid = pid
    }

    static func spawn(binary: String, arguments: [String], notifySocket: String, logPath: String) throws -> DirectDaemon {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = [binary] + arguments
        let environment = [
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
            "NOTIFY_SOCKET=\(notifySocket)",
            "MEMORY_PRESSURE_WATCH=/dev/null",
        ]
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, binary, &actions, &attributes, &cArguments, &cEnvironment)
        guard result == 0 else { throw HarnessError("posix_spawn \(binary): \(String(cString: strerror(result)))") }
        return DirectDaemon(pid: pid)
    }

    /// Whether it has not exited yet (reaps it when it has).
    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { exitStatus = Self.decode(status); return false }
        return result == 0
    }

    func kill(_ signal: Int32) {
        if exitStatus == nil { _ = Glibc.kill(pid, signal) }
    }

    /// Waits for the exit.
    func reap() -> Ending {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let decoded = Self.decode(status)
        exitStatus = decoded
        return decoded
    }

    private static func decode(_ status: Int32) -> Ending {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }
}
