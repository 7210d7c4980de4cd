import AppHostTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The Debian a `SystemManager` boots: `$APPHOSTD_DEBIAN_RELEASE`, bookworm (Debian 12, systemd
/// 252, what the daemon is designed for) unless it says trixie (Debian 13, systemd 257, where
/// what 254 and later add is tested). scripts/test.sh runs SystemManagerTests under both.
enum DebianRelease: String, CaseIterable, Sendable {
    case bookworm, trixie

    /// The release this test run boots; nil when `$APPHOSTD_DEBIAN_RELEASE` names another.
    static let current: DebianRelease? = {
        let value = ProcessInfo.processInfo.environment["APPHOSTD_DEBIAN_RELEASE"] ?? ""
        return value.isEmpty ? .bookworm : DebianRelease(rawValue: value)
    }()

    /// "Debian 12 (bookworm)".
    var name: String {
        switch self {
        case .bookworm: "Debian 12 (bookworm)"
        case .trixie: "Debian 13 (trixie)"
        }
    }

    /// What nspawn needs to boot it on this cgroup v1 host: systemd 256 and later refuse to run
    /// as PID 1 without a unified cgroup hierarchy, which nspawn then gives the container.
    var nspawnEnvironment: [String: String] {
        self == .trixie ? ["SYSTEMD_NSPAWN_UNIFIED_HIERARCHY": "1"] : [:]
    }
}

/// A minimal Debian root with systemd, built once with debootstrap and kept between test runs
/// in the repository's ignored build area (`.build-debian-root/` for bookworm,
/// `.build-debian-root-trixie/`), for `SystemManager` to copy and boot.
///
/// The cache is complete when its marker holds the recipe it was built with; a changed recipe or
/// an interrupted debootstrap builds it again. A lock file keeps two test runs from building it
/// at the same time.
enum DebianRoot {
    /// Where the cache lives: `root/` (the tree), `complete` (the marker), `lock`.
    static let release = DebianRelease.current ?? .bookworm
    static let cache = ReleaseBuild.repository + (release == .bookworm ? "/.build-debian-root" : "/.build-debian-root-\(release.rawValue)")
    static var tree: String { cache + "/root" }
    static var marker: String { cache + "/complete" }
    static var partial: String { cache + "/root.partial" }

    /// The Debian mirror: `$APPHOSTD_DEBIAN_MIRROR`, else debootstrap's default.
    static let mirror = ProcessInfo.processInfo.environment["APPHOSTD_DEBIAN_MIRROR"].flatMap { $0.isEmpty ? nil : $0 }
        ?? "http://deb.debian.org/debian"

    /// What the root holds: systemd as init, D-Bus, the libraries the daemon links,
    /// node_exporter (enabled at boot, as Debian installs it), which reads the metrics textfile,
    /// and what logind needs to answer as on a real machine: polkitd (without it logind refuses
    /// an unprivileged inhibitor, "Access denied") and libpam-systemd (pam_systemd, which makes
    /// a `PAMName=login` unit a logind session), and for the Debian package's tests (which have no
    /// network) what it depends on, recommends and shows: man-db (`man apphostd`) and
    /// bash-completion. For the machine's conditions: iproute2 (a veth pair for networkd, which
    /// the tests start), power-profiles-daemon (enabled at boot, as Debian installs it; on its
    /// placeholder driver) and python3-dbusmock with python3-gi (UPower and NetworkManager need
    /// hardware: their templates stand in), and dbus-x11 on Debian 12, which its dbusmock
    /// wants.
    static let debootstrapArguments = [
        "--variant=minbase",
        "--include=systemd,systemd-sysv,dbus,libyaml-0-2,libsystemd0,prometheus-node-exporter,polkitd,libpam-systemd,man-db,bash-completion,"
            + "iproute2,power-profiles-daemon,python3-dbusmock,python3-gi" + (release == .bookworm ? ",dbus-x11" : ""),
        release.rawValue,
    ]

    /// The marker's text: a different recipe or mirror is a different root.
    static var recipe: String { "debootstrap " + debootstrapArguments.joined(separator: " ") + " ROOT " + mirror + "\n" }

    /// Whether a complete root of this recipe is cached.
    static var isCached: Bool {
        (try? String(contentsOfFile: marker, encoding: .utf8)) == recipe
            && FileManager.default.fileExists(atPath: tree + "/lib/systemd/systemd")
    }

    /// Why no root can be had here, or nil. Without a cached root it needs debootstrap and the
    /// mirror (a TCP connection to its host, unless a proxy is configured).
    static func problem() -> String? {
        if DebianRelease.current == nil {
            return "APPHOSTD_DEBIAN_RELEASE=\(ProcessInfo.processInfo.environment["APPHOSTD_DEBIAN_RELEASE"] ?? "") is none of \(DebianRelease.allCases.map(\.rawValue).joined(separator: ", "))"
        }
        if isCached { return nil }
        if ProcessRunner.resolve("debootstrap") == nil {
            return "no Debian root of this recipe cached in \(cache), and no debootstrap to build one (apt-get install debootstrap)"
        }
        let environment = ProcessInfo.processInfo.environment
        if ["http_proxy", "HTTP_PROXY"].contains(where: { environment[$0]?.isEmpty == false }) { return nil }
        guard let url = URL(string: mirror), let host = url.host else { return "cannot read the mirror URL \(mirror)" }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        if let failure = tcpConnectProblem(host: host, port: port, timeoutSeconds: 5) {
            return "no Debian root of this recipe cached in \(cache), and the mirror \(mirror) cannot be reached: \(failure)"
        }
        return nil
    }

    /// The cached root's path, building it first when needed (debootstrap takes about half a
    /// minute to a few minutes). Reports what it did through `note`.
    static func prepare(note: (String) -> Void) async throws -> String {
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let lock = open(cache + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lock >= 0 else { throw HarnessError("cannot open \(cache)/lock: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        // Another test run may be building it: wait for its lock (bounded), then look again.
        guard await eventually(timeout: .seconds(900), every: .milliseconds(500), { flock(lock, LOCK_EX | LOCK_NB) == 0 }) else {
            throw HarnessError("\(cache)/lock is held by another process for more than 15 minutes")
        }
        defer { flock(lock, LOCK_UN) }
        if isCached {
            note("reusing the Debian root in \(tree)")
            return tree
        }

        try await remove(tree)
        try await remove(partial)
        try? FileManager.default.removeItem(atPath: marker)
        note("building the Debian root: debootstrap \(debootstrapArguments.joined(separator: " ")) \(partial) \(mirror)")
        let debootstrap = try await ProcessRunner.run(
            ["debootstrap"] + debootstrapArguments + [partial, mirror], timeout: .seconds(900))
        guard debootstrap.succeeded else {
            let log = (try? String(contentsOfFile: partial + "/debootstrap/debootstrap.log", encoding: .utf8)) ?? ""
            throw HarnessError("debootstrap failed: \(debootstrap)\ndebootstrap.log (tail):\n\(log.suffix(3000))")
        }
        try FileManager.default.moveItem(atPath: partial, toPath: tree)
        try recipe.write(toFile: marker, atomically: true, encoding: .utf8)
        return tree
    }

    /// Removes a tree that debootstrap or a test made, unmounting first whatever an interrupted
    /// debootstrap left mounted inside it (`/proc`, `/sys`), and never crossing into another
    /// file system.
    static func remove(_ path: String) async throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let inside = mounts.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { return nil }
            let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
            return point.hasPrefix(path + "/") ? point : nil
        }
        for point in inside.sorted(by: { $0.count > $1.count }) {
            _ = try await ProcessRunner.run(["umount", "-l", point])
        }
        let removal = try await ProcessRunner.run(["rm", "-rf", "--one-file-system", path], timeout: .seconds(300))
        guard removal.succeeded else { throw HarnessError("cannot remove \(path): \(removal)") }
    }

    /// Why a TCP connection to `host:port` fails within the timeout, or nil when it succeeds.
    static func tcpConnectProblem(host: String, port: Int, timeoutSeconds: Int) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else { return "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))" }
        defer { freeaddrinfo(list) }
        var failure = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Linux bounds a blocking connect by the send timeout.
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return nil }
            failure = "connect to \(host):\(port): \(String(cString: strerror(errno)))"
        }
        return failure
    }
}
