#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's environment variables, read from `environ` when asked: what the daemon
/// reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `MEMORY_PRESSURE_WATCH` from, without Foundation.
public enum ProcessEnvironment {
    /// Every `NAME=value` of `environ`; of a name given twice, the first wins, as `getenv` does.
    public static var current: [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }
}
