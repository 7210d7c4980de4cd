@testable import AppHost
import AppHostTestKit
import Testing

/// State shared by key: set by one service, read and observed by another, kept across a reload,
/// restored after a restart when the key is restorable; seeded and read with the test kit.
@Suite(.timeLimit(.minutes(1))) struct SharedStateTests {
    enum ThemeColor: SharedStateKey {
        static let defaultValue = "blue"
    }

    /// A counter that survives restarts: four bytes, little-endian.
    enum Visits: RestorableSharedStateKey {
        static let defaultValue: UInt32 = 0
        static let name = "visits"
        static func encode(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        static func decode(_ bytes: [UInt8]) -> UInt32? {
            bytes.count == 4 ? bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << ($1.offset * 8) } : nil
        }
    }

    /// Sets the color to red in the background and counts a visit at launch.
    struct Painter: ApplicationService {
        func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            application.setSharedState(Visits.self, to: application.sharedState(Visits.self) + 1)
            return true
        }

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            application.setSharedState(ThemeColor.self, to: "red")
        }
    }

    /// Reads the color in every foreground.
    struct Reader: ApplicationService {
        let seen: TestLog<String>
        func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
            seen.append(application.sharedState(ThemeColor.self))
        }
    }

    @Test("one service sets a value, another reads it and observes the change on the bus, with the request that made it")
    func setReadAndObserve() async throws {
        let seen = TestLog<String>()
        let services = [ServiceDescriptor(name: "painter", service: Painter()), ServiceDescriptor(name: "reader", service: Reader(seen: seen))]
        try await withTestHost(services) { host in
            let changes = host.deliveries(of: SharedStateDidChange<ThemeColor>.self)
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            #expect(host.sharedState[ThemeColor.self] == "blue", "the default before anyone set it")
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(seen.all == ["red"])
            #expect(changes.all.map(\.message.value) == ["red"] && changes.all.first?.message.service == "painter")
            let background = records.all.first { $0.event == .didEnterBackground }
            #expect(changes.all.first?.requestID != nil && changes.all.first?.requestID == background?.requestID, "the change carries the id of the SIGUSR1 that made it")
            #expect(host.sharedState[Visits.self] == 1, "a restorable key works without restorable storage, in memory")
            #expect(host.sharedState[ThemeColor.self] == "red")
        }
    }

    @Test("the test kit seeds a value before the launch; a reload keeps every value")
    func seedAndReload() async throws {
        let seen = TestLog<String>()
        try await withTestHost([ServiceDescriptor(name: "reader", service: Reader(seen: seen))], seed: { $0.set(ThemeColor.self, to: "green") }) { host in
            try await host.launched()
            _ = try await host.reload([ServiceDescriptor(name: "reader2", service: Reader(seen: seen))])
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(seen.all == ["green"], "the reloaded service reads what was set before")
        }
    }

    @Test("a restorable key rides on the restorable state: the next run reads the last value, and a key nobody read yet is kept")
    func restorableKeysSurviveARestart() async throws {
        let storage = InMemoryRestorableStateStorage()
        let configuration = PluggableApplicationHost.Configuration(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), restorableState: storage)
        for run in 1...3 {
            try await withTestHost([ServiceDescriptor(name: "painter", service: Painter())], configuration: configuration) { host in
                try await host.launched()
                #expect(host.sharedState[Visits.self] == UInt32(run), "run \(run)")
            }
        }
        #expect(storage.latest?.services[".shared/visits"] == [3, 0, 0, 0])
        // A run whose services never read it keeps it as it was.
        try await withTestHost([ServiceDescriptor(name: "reader", service: Reader(seen: TestLog()))], configuration: configuration) { host in
            _ = try await host.launched()
        }
        #expect(storage.latest?.services[".shared/visits"] == [3, 0, 0, 0])
    }
}
