/// Published by the host after a reload was applied.
public struct ConfigurationDidReload: Sendable, Hashable {
    /// Services that were added, removed, updated live and restarted.
    public let added: [String], removed: [String], updated: [String], restarted: [String]
}
