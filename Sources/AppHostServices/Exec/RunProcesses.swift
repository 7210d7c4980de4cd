import AppHostSupport
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything one exec run started, so that a timeout leaves nothing of it behind.
///
/// The program leads a process group of its own; killing the group reaches what stayed in it,
/// even after the leader exited. A descendant that left the group (`setsid`, a daemonizing double
/// fork) is found by a marker every process of the run inherits in its environment,
/// `APPHOST_EXEC_RUN`, unique to the run. Only a program that clears its environment escapes.
final class RunProcesses: Sendable {
    /// The environment variable that marks a run's processes.
    static let markerName = "APPHOST_EXEC_RUN"

    /// This run's marker value: random, so runs of this or an earlier daemon never share one.
    let marker: String
    private let leader = Mutex<pid_t?>(nil)

    init() {
        var generator = SystemRandomNumberGenerator()
        marker = String(generator.next() as UInt64, radix: 16)
    }

    /// The marker as it appears in `/proc/PID/environ`.
    private var environEntry: [UInt8] { Array("\(Self.markerName)=\(marker)".utf8) + [0] }

    func keep(_ pid: pid_t) { leader.withLock { $0 = pid } }
    func forget() { leader.withLock { $0 = nil } }

    /// SIGKILL to the whole group, leader gone or not, then to every process that carries the
    /// marker, again until none is left (a killed parent may have had children in flight).
    /// Returns how many marked processes outside the group were killed.
    @discardableResult
    func killIfKept() -> Int {
        guard let pid = leader.withLock({ $0 }) else { return 0 }
        _ = kill(-pid, SIGKILL)
        let entry = environEntry
        var killed: Set<pid_t> = []
        for _ in 0..<20 {
            let marked = Self.processes(whoseEnvironmentContains: entry).filter { !killed.contains($0) }
            if marked.isEmpty { break }
            for process in marked where kill(process, SIGKILL) == 0 { killed.insert(process) }
        }
        return killed.count
    }

    /// Live processes (zombies excluded) whose environment holds `entry`, a `NAME=value\0`.
    static func processes(whoseEnvironmentContains entry: [UInt8]) -> [pid_t] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var found: [pid_t] = []
        let own = getpid()
        while let record = readdir(directory) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = pid_t(name), pid != own else { continue }
            // A zombie's environ reads empty, so it is never matched.
            if environment(of: pid).contains(entry) { found.append(pid) }
        }
        return found
    }

    /// `/proc/PID/environ` (at most 8 MiB; the kernel caps an environment well below), or
    /// nothing when it cannot be read. procfs reports no size, so room starts at 4 KiB.
    private static func environment(of pid: pid_t) -> [UInt8] {
        guard let file = try? FileDescriptor.open(FilePath("/proc/\(pid)/environ"), .readOnly, options: .closeOnExec) else { return [] }
        defer { try? file.close() }
        return ((try? file.readAll(limit: 8 << 20, expected: 4096)) ?? nil) ?? []
    }
}

extension Array where Element == UInt8 {
    /// Whether `entry` occurs at the start of one of the NUL-separated strings.
    fileprivate func contains(_ entry: [UInt8]) -> Bool {
        guard !entry.isEmpty, count >= entry.count else { return false }
        var start = 0
        while start + entry.count <= count {
            if self[start..<(start + entry.count)].elementsEqual(entry) { return true }
            guard let end = self[start...].firstIndex(of: 0) else { return false }
            start = end + 1
        }
        return false
    }
}
