// README.md's "Share state by key", as written there.
import AppHost

enum ThemeColor: SharedStateKey {
    static let defaultValue = "blue"
}

enum Visits: RestorableSharedStateKey {
    static let defaultValue: UInt32 = 0
    static let name = "visits"           // its name in the restorable state: keep it stable
    static func encode(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    static func decode(_ bytes: [UInt8]) -> UInt32? {
        bytes.count == 4 ? bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << ($1.offset * 8) } : nil
    }
}

/// The README's lines that use the keys, in a service's hook and in another's run loop.
func shareStateByKey(_ application: ApplicationHandle) async {
    // In one service's hook:
    application.setSharedState(ThemeColor.self, to: "red")
    application.setSharedState(Visits.self, to: application.sharedState(Visits.self) + 1)
    // In another's run loop:
    for await change in application.bus.subscribe(to: SharedStateDidChange<ThemeColor>.self) {
        application.logger.info("\(change.service) set the color to \(change.value)")
    }
}
