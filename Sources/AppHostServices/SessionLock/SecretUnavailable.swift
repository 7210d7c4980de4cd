/// Why the session secret could not be loaded, told as what to fix. Never carries the secret.
package struct SecretUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file that was tried, or the variable that was missing.
    package let path: String
    /// What is wrong with it.
    package let problem: String
    /// What the operator should do.
    package let fix: String

    package var description: String { "\(path) \(problem) (\(fix))" }
}
