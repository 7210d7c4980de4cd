import AppHost
import AppHostSupport
import Glibc

/// Which source to watch: `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE`, the own
/// cgroup's PSI file, or the system's.
extension MemoryPressureSource {
    /// The chosen source, or why there is none (`expected` when turned off on purpose).
    package enum Resolution {
        case watching([MemoryPressureEndpoint], description: String)
        case off(reason: String, expected: Bool)
    }

    /// Picks the source: the watch variables first, then the own cgroup's PSI file, then the
    /// system-wide one.
    package static func resolve(environment: [String: String], thresholds: Thresholds) -> Resolution {
        if let watch = environment["MEMORY_PRESSURE_WATCH"] {
            guard !watch.isEmpty, watch != "/dev/null" else {
                return .off(reason: "MEMORY_PRESSURE_WATCH=\(watch) turns watching off", expected: true)
            }
            var write: [UInt8]?
            if let encoded = environment["MEMORY_PRESSURE_WRITE"], !encoded.isEmpty {
                guard let decoded = decodeWrite(encoded) else {
                    return .off(reason: "MEMORY_PRESSURE_WRITE is not valid base64", expected: false)
                }
                write = decoded
            }
            switch MemoryPressureEndpoint.openWatch(
                path: watch, write: write, defaultTrigger: thresholds.warningTrigger)
            {
            case .success(let endpoint):
                let detail = endpoint.kind == .psi
                    ? "PSI: \(endpoint.trigger)" : endpoint.kind.rawValue
                return .watching([endpoint], description: "MEMORY_PRESSURE_WATCH=\(watch) (\(detail))")
            case .failure(let failure):
                return .off(reason: "MEMORY_PRESSURE_WATCH=\(watch): \(failure.reason)", expected: false)
            }
        }
        var failures: [String] = []
        var candidates: [String] = []
        if let cgroupFile = ownCgroupPressureFile() { candidates.append(cgroupFile) }
        candidates.append("/proc/pressure/memory")
        for path in candidates {
            guard access(path, F_OK) == 0 else {
                failures.append("\(path): \(SystemErrorText.describe(errno))")
                continue
            }
            var endpoints: [MemoryPressureEndpoint] = []
            var refused: [String] = []
            for (level, trigger) in [
                (MemoryWarningLevel.warning, thresholds.warningTrigger),
                (.critical, thresholds.criticalTrigger),
            ] {
                switch MemoryPressureEndpoint.openPSI(path: path, trigger: Array(trigger.utf8), level: level) {
                case .success(let endpoint): endpoints.append(endpoint)
                case .failure(let failure): refused.append(failure.reason)
                }
            }
            if !endpoints.isEmpty {
                var description = "\(path) (PSI: \(endpoints.map(\.trigger).joined(separator: ", "))"
                if !refused.isEmpty { description += "; \(refused.joined(separator: "; "))" }
                return .watching(endpoints, description: description + ")")
            }
            failures.append("\(path): \(refused.joined(separator: "; "))")
        }
        return .off(reason: failures.joined(separator: "; "), expected: false)
    }

    /// `$MEMORY_PRESSURE_WRITE` is base64 (with or without padding).
    package static func decodeWrite(_ encoded: String) -> [UInt8]? {
        var digits = Array(encoded.trimmingWhitespace.utf8)
        while digits.last == UInt8(ascii: "=") { digits.removeLast() }
        guard digits.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for digit in digits {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = digit - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = digit - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return bytes
    }

    /// `/sys/fs/cgroup/<path>/memory.pressure` from the "0::/path" line of /proc/self/cgroup when
    /// that file exists (cgroup v2 mounted at /sys/fs/cgroup); nil on v1 or hybrid hierarchies.
    static func ownCgroupPressureFile(cgroupFile: String = "/proc/self/cgroup") -> String? {
        guard let path = OwnCgroup.path(cgroupFile: cgroupFile) else { return nil }
        let file = "/sys/fs/cgroup" + (path == "/" ? "" : path) + "/memory.pressure"
        return access(file, F_OK) == 0 ? file : nil
    }
}
