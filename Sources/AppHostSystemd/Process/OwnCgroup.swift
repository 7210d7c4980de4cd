import AppHostSupport
/// The process's own cgroup v2 path, from the `0::/path` line of /proc/self/cgroup.
enum OwnCgroup {
    /// The path (`/system.slice/apphostd.service`); nil on cgroup v1 or when unreadable.
    static func path(cgroupFile: String = "/proc/self/cgroup") -> String? {
        guard let bytes = try? AtomicFile.read(cgroupFile) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            return String(line.dropFirst(3))
        }
        return nil
    }
}
