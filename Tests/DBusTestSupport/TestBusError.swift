/// A test bus or notification server that could not start.
public struct TestBusError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    /// What went wrong, as the test failure says it.
    public var description: String { message }
}
