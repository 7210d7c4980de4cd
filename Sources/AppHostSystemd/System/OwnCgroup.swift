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

    /// The path below the cgroup the system's manager runs in, as systemd shifts it (PID 1's
    /// cgroup without its `/init.scope`): the same path inside a container without a cgroup
    /// namespace as inside one with it.
    static func pathBelowManager(cgroupFile: String = "/proc/self/cgroup", managerCgroupFile: String = "/proc/1/cgroup") -> String? {
        guard let own = path(cgroupFile: cgroupFile) else { return nil }
        guard var root = path(cgroupFile: managerCgroupFile) else { return own }
        for suffix in ["/init.scope", "/system.slice", "/system"] where root.hasSuffix(suffix) {
            root.removeLast(suffix.count)
            break
        }
        guard !root.isEmpty, root != "/", own.hasPrefix(root + "/") else { return own }
        return String(own.dropFirst(root.count))
    }
}
