import Glibc
import Logging

/// The properties' values, as systemd spells them; the C side holds the returned text until
/// its next call. On the loop's thread only.
final class LogControlProperties: @unchecked Sendable {
    let identifier: String
    let control: LogLevelControl
    private var text: UnsafeMutablePointer<CChar>?

    init(identifier: String, control: LogLevelControl) {
        self.identifier = identifier
        self.control = control
    }

    deinit {
        free(text)
    }

    func value(of property: String) -> UnsafePointer<CChar>? {
        let value = switch property {
        case "LogLevel": Self.systemdName(of: control.level)
        case "LogTarget": control.target.rawValue
        default: identifier
        }
        free(text)
        text = strdup(value)
        return UnsafePointer(text)
    }

    func set(_ property: String, to value: String) -> Int32 {
        switch property {
        case "LogLevel":
            guard let level = Self.level(systemdName: value) else { return -EINVAL }
            control.level = level
        case "LogTarget":
            guard let target = LogLevelControl.Target(rawValue: value) else { return -EINVAL }
            control.target = target
        default:
            return -EINVAL
        }
        return 0
    }

    /// systemd's name of a swift-log level (`trace` has none: `debug`).
    static func systemdName(of level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "err"
        case .critical: "crit"
        }
    }

    /// The swift-log level of a systemd level name or number (syslog's 0–7).
    static func level(systemdName name: String) -> Logger.Level? {
        switch name {
        case "emerg", "alert", "crit", "0", "1", "2": .critical
        case "err", "3": .error
        case "warning", "4": .warning
        case "notice", "5": .notice
        case "info", "6": .info
        case "debug", "7": .debug
        default: nil
        }
    }
}
