#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's environment variables, read from `environ` when asked: what the daemon
/// reads `MEMORY_PRESSURE_WATCH`, `FDSTORE` and the config's variables from, without Foundation
/// (libsystemd reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `LISTEN_FDS` itself).
public enum ProcessEnvironment {
    /// Every `NAME=value` of `environ`; of a name given twice, the first wins, as `getenv` does.
    /// Split on the bytes (not on `Character`s, whose grapheme breaking cost about 0.4 M
    /// instructions of every start for 40 variables).
    public static var current: [String: String] {
        variables(of: environ)
    }

    /// The variables of a NULL-terminated `NAME=value` list like `environ`.
    static func variables(of list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> [String: String] {
        var variables: [String: String] = [:]
        var entry = list
        while let pointer = entry.pointee {
            entry += 1
            guard let equals = strchr(pointer, Int32(UInt8(ascii: "="))) else { continue }
            let name = UnsafeRawBufferPointer(start: pointer, count: pointer.distance(to: equals))
            let key = String(decoding: name, as: UTF8.self)
            if variables[key] == nil { variables[key] = String(cString: equals + 1) }
        }
        return variables
    }
}
