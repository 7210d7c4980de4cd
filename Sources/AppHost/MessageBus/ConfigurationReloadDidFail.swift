/// Published by the daemon when a reload was refused and the old configuration keeps running.
public struct ConfigurationReloadDidFail: Sendable, Hashable {
    /// The error, as an operator reads it.
    public let message: String

    /// A refusal saying `message`.
    public init(message: String) {
        self.message = message
    }
}
