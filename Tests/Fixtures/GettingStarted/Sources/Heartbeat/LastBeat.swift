import AppHost

/// The last beat's count, for any service of the host to read.
public enum LastBeat: SharedStateKey {
    public static let defaultValue = 0
}
