import AppHost

/// A `TestHost` wait that ran out of time: what it waited for, and what happened instead.
public struct TestHostTimeout: Error, CustomStringConvertible {
    /// What the test waited for.
    public let waitingFor: String
    /// How long it waited.
    public let waited: Duration
    /// The hook calls recorded by then.
    public let calls: [RecordedHookCall]
    /// The host's state by then.
    public let state: ApplicationState

    /// What was awaited, for how long, the host's state and every hook call by then.
    public var description: String {
        let seen = calls.isEmpty ? "none" : calls.map(\.description).joined(separator: ", ")
        return "waited \(waited) for \(waitingFor); the host is \(state); hook calls so far: \(seen)"
    }
}
