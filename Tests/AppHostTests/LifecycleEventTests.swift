import Testing

@testable import AppHost

@Suite("LifecycleEvent")
struct LifecycleEventTests {
    @Test("an event's short name is its hook name without `application`, the memory warning with its level")
    func shortNameFollowsHookName() {
        for event in Self.events {
            var expected = String(event.hookName.dropFirst("application".count))
            expected = expected.prefix(1).lowercased() + expected.dropFirst()
            if case .didReceiveMemoryWarning(let level) = event { expected += ".\(level.rawValue)" }
            #expect(event.name == expected)
        }
        #expect(LifecycleEvent.allNames == Self.events.map(\.name))
    }

    static let events: [LifecycleEvent] = [
        .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive,
        .didEnterBackground, .willEnterForeground, .didReceiveMemoryWarning(.warning),
        .didReceiveMemoryWarning(.critical), .significantTimeChange, .networkDidChange, .powerStateDidChange,
        .protectedDataWillBecomeUnavailable,
        .protectedDataDidBecomeAvailable, .willTerminate, .didUpdateConfiguration,
    ]
}
