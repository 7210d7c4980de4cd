/// How hard the system asks for memory back.
public enum MemoryWarningLevel: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
    /// Pressure is building: drop caches that are cheap to rebuild.
    case warning
    /// Pressure is severe or a trim was requested: release everything that can be released.
    case critical

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs == .warning && rhs == .critical
    }
}
