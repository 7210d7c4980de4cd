import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Messages for the person at the terminal, or for the journal's stream when stderr is one.
package enum StandardError {
    /// Writes `text` whole; a closed or broken stderr is ignored (there is nowhere else to say it).
    package static func write(_ text: String) {
        _ = try? FileDescriptor.standardError.writeAll(Array(text.utf8))
    }

    /// Writes an error line: with journald's `<3>` priority prefix when stderr is a stream or
    /// file (systemd reads it), bare on a terminal, where the prefix would be noise.
    package static func writeError(_ line: String) {
        write((isatty(STDERR_FILENO) == 0 ? "<3>" : "") + line + "\n")
    }
}
