/// What a finished child process left behind.
struct CommandResult: Sendable, CustomStringConvertible {
    /// The argv that ran.
    let argv: [String]
    /// Exit status, or 128 + signal number when a signal ended it.
    let status: Int32
    /// Everything it wrote to stdout.
    let stdout: String
    /// Everything it wrote to stderr.
    let stderr: String

    /// Whether it exited with status 0.
    var succeeded: Bool { status == 0 }

    var description: String {
        var text = "`\(argv.joined(separator: " "))` exited \(status)"
        let out = stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let err = stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        if !out.isEmpty { text += "\nstdout: \(out.suffix(2000))" }
        if !err.isEmpty { text += "\nstderr: \(err.suffix(2000))" }
        return text
    }
}
