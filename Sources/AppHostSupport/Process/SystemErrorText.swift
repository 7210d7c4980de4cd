import SystemPackage

/// Errno values as operators read them in logs and messages: the one way the daemon turns an
/// errno into text (swift-system's `Errno`, which is `strerror`).
package enum SystemErrorText {
    /// The reason alone: "Permission denied".
    package static func reason(_ code: Int32) -> String {
        Errno(rawValue: abs(code)).description
    }

    /// The reason with the number: "Permission denied (errno 13)".
    package static func describe(_ code: Int32) -> String {
        "\(reason(code)) (errno \(abs(code)))"
    }
}
