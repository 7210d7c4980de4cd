/// A failure of the test harness or of a bounded wait, with everything needed to diagnose it.
struct HarnessError: Error, CustomStringConvertible {
    /// The whole explanation, diagnostics included.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
