import AppHost
import AppHostTestKit
import Heartbeat
import Testing

@Test func countsEntriesIntoTheBackgroundAcrossRuns() async throws {
    // What the previous run kept: two entries.
    let storage = InMemoryRestorableStateStorage(services: ["counter": Array("2".utf8)])
    let counter = try BackgroundCounter(configuration: .empty)
    try await withTestHost([ServiceDescriptor(name: "counter", service: counter)], configuration: .init(restorableState: storage)) { host in
        try await host.launched()
        try await host.enterBackground()
        try await host.enterForeground()
        try await host.enterBackground()
        #expect(counter.entries == 4)
        // Kept for the next run, as the host gives it back after a crash or a restart.
        #expect(await storage.kept.first { $0.services["counter"] == Array("4".utf8) } != nil)
    }
}
