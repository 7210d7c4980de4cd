/// Names a value the host keeps for its services, in the style of `ServiceContextKey` and
/// SwiftUI's `EnvironmentKey`: the type is the name, `Value` the type of the value, and
/// `defaultValue` what a read gets before anyone set it.
///
/// ```swift
/// enum ThemeColor: SharedStateKey {
///     static let defaultValue = "blue"
/// }
/// application.setSharedState(ThemeColor.self, to: "red")   // one service
/// application.sharedState(ThemeColor.self)                  // another: "red"
/// ```
///
/// Any service reads and sets it through its `ApplicationHandle`; every change is published on
/// the bus as `SharedStateDidChange<Key>`, so services observe it without holding each other.
/// Values survive a reload; a `RestorableSharedStateKey` survives a crash and a restart too.
public protocol SharedStateKey: Sendable {
    /// The type of the value.
    associatedtype Value: Sendable
    /// The value before anyone set it.
    static var defaultValue: Value { get }
}

/// A `SharedStateKey` whose value rides on the host's restorable state (systemd's fd store and
/// the state directory): after a crash, a SIGKILL or a restart, reads get the last value set.
/// The key gives its own byte encoding (the host stays free of Foundation and of any format).
public protocol RestorableSharedStateKey: SharedStateKey {
    /// The key's name in the restorable state: stable across versions, unique among keys.
    static var name: String { get }
    /// The value as bytes.
    static func encode(_ value: Value) -> [UInt8]
    /// The value back from `encode`'s bytes; nil when they are not a value (a read then gets
    /// `defaultValue`).
    static func decode(_ bytes: [UInt8]) -> Value?
}

/// Published on the bus after a service set a shared value.
public struct SharedStateDidChange<Key: SharedStateKey>: Sendable {
    /// The new value.
    public let value: Key.Value
    /// The service that set it.
    public let service: String
}
