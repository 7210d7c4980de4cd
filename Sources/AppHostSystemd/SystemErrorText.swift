import Glibc

/// Renders errno values the way operators read them in logs: `EACCES (Permission denied)`-style text.
enum SystemErrorText {
    /// `strerror` text with the number, e.g. "Permission denied (errno 13)".
    static func describe(_ code: Int32) -> String {
        let code = abs(code)
        return "\(String(cString: strerror(code))) (errno \(code))"
    }
}
