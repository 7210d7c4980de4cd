import SystemPackage

/// Messages for the person at the terminal, or for the journal's stream when stderr is one.
package enum StandardError {
    /// Writes `text` whole; a closed or broken stderr is ignored (there is nowhere else to say it).
    package static func write(_ text: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array(text.utf8))
    }
}
