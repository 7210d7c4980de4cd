/// What a service tells the host after its configuration section changed on reload.
public enum ConfigurationUpdate: Sendable, Hashable {
    /// The service took the new settings live; it keeps running.
    case applied
    /// The host should terminate this instance and launch a new one built from the new settings.
    case restartRequired
}
