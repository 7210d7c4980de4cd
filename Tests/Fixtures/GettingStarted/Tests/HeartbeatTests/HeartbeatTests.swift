import AppHost
import AppHostTestKit
import Heartbeat
import Testing

@Test func logsTheLaunchAndFlushesBeforeTheBackground() async throws {
    let heartbeat = try Heartbeat(configuration: ["interval": "10s"])
    try await withTestHost([ServiceDescriptor(name: "heartbeat", service: heartbeat)]) { host in
        try await host.launched()
        try await host.enterBackground()
        #expect(host.events(of: "heartbeat") == [
            .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive, .didEnterBackground,
        ])
        #expect(host.logs.messages.contains("launch #1, previous exit: none"))
        #expect(host.logs.messages.contains("flushing before background"))
    }
}

@Test func refusesAnIntervalThatIsNotADuration() {
    let error = #expect(throws: ConfigurationError.self) {
        try Heartbeat(configuration: ["interval": "often"])
    }
    #expect(error?.keyPath == "settings.interval")
}

@Test func beatsOnTheBusWhileItRuns() async throws {
    let heartbeat = try Heartbeat(configuration: ["interval": "10ms"])
    try await withTestHost([ServiceDescriptor(name: "heartbeat", service: heartbeat)]) { host in
        // Messages from now on; call it before the action that leads to them.
        let beats = host.messages(of: Heartbeat.Beat.self)
        try await host.launched()
        #expect(await beats.first { $0.count == 2 } != nil)
        // A log record is awaited the same way.
        #expect(await host.logs.first { $0.message.hasPrefix("launch #1") } != nil)
    }
}

@Test func countsOnFromWhereTheLastRunLeftOff() async throws {
    let heartbeat = try Heartbeat(configuration: ["interval": "10ms"])
    // What the previous run kept, as the host gives it back after a crash or a restart.
    let storage = InMemoryRestorableStateStorage(services: ["heartbeat": Array("41".utf8)])
    try await withTestHost([ServiceDescriptor(name: "heartbeat", service: heartbeat)], configuration: .init(restorableState: storage)) { host in
        let beats = host.messages(of: Heartbeat.Beat.self)
        try await host.launched()
        #expect(await beats.first { $0.count == 42 } != nil)
        #expect(await storage.kept.first { $0.services["heartbeat"] == Array("42".utf8) } != nil)
    }
}

@Test func sharesItsLastBeatAndLogsEachRequestsID() async throws {
    let heartbeat = try Heartbeat(configuration: ["interval": "10ms"])
    try await withTestHost([ServiceDescriptor(name: "heartbeat", service: heartbeat)]) { host in
        let beats = host.messages(of: Heartbeat.Beat.self)
        try await host.launched()
        _ = await beats.first { $0.count == 2 }
        #expect(host.sharedState[LastBeat.self] >= 2)
        try await host.enterBackground()
        // The background's hooks ran with its request id: its log lines carry it.
        let flush = await host.logs.first { $0.message == "flushing before background" }
        #expect(flush?.metadata["request_id"] != nil)
    }
}
