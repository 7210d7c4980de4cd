@testable import AppHost
import AppHostTestKit
import ServiceContextModule
import Testing

/// One id per request: every hook of a request runs with it in `ServiceContext`, and what the
/// request caused (log lines, bus messages, the audit record, the status) carries it.
@Suite struct RequestIDTests {
    struct Note: Sendable { let from: String }

    /// Logs a line and publishes a `Note` in `didEnterBackground`; logs from its run loop.
    struct Chatty: ApplicationService {
        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            application.logger.info("\(application.serviceName) going to the background")
            application.bus.publish(Note(from: application.serviceName))
        }

        func run(_ application: ApplicationHandle) async throws {
            application.logger.info("\(application.serviceName) run loop started")
        }
    }

    static let services = [ServiceDescriptor(name: "a", service: Chatty()), ServiceDescriptor(name: "b", service: Chatty())]

    func requestIDs(_ host: TestHost, _ suffix: String) -> [String?] {
        host.logs.all.filter { $0.message.hasSuffix(suffix) }.map { $0.metadata["request_id"] }
    }

    @Test("every hook of one request logs its id, and the next request has another")
    func oneIDPerRequest() async throws {
        try await withTestHost(Self.services) { host in
            try await host.launched()
            try await host.enterBackground()
            let first = requestIDs(host, "going to the background")
            #expect(first.count == 2 && first[0] != nil && first[0] == first[1], "\(first)")
            try await host.enterForeground()
            try await host.enterBackground()
            let both = requestIDs(host, "going to the background")
            #expect(both.count == 4 && both[2] == both[3] && both[2] != both[0], "\(both)")
            #expect(both[0]?.count == 16 && both[0]?.allSatisfy(\.isHexDigit) == true)
        }
    }

    @Test("a bus message published in a hook, the audit record and the status carry the id of the request that caused them")
    func whatARequestCausedCarriesItsID() async throws {
        try await withTestHost(Self.services) { host in
            let notes = host.deliveries(of: Note.self)
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            try await host.enterBackground()
            let id = try #require(requestIDs(host, "going to the background").first ?? nil)
            #expect(notes.all.map(\.message.from) == ["b", "a"])
            #expect(notes.all.map(\.requestID) == [id, id])
            #expect(records.all.last { $0.event == .didEnterBackground }?.requestID == id)
            #expect(host.status.requestID == id)
            // The launch was a request of its own.
            let launch = try #require(records.all.first { $0.event == .didFinishLaunching })
            #expect(launch.requestID != nil && launch.requestID != id)
        }
    }

    @Test("an embedding program's call passes its own context in: the hooks run with its id")
    func aCallerSuppliesItsOwnID() async throws {
        try await withTestHost(Self.services) { host in
            try await host.launched()
            var context = ServiceContext.topLevel
            context.hostRequestID = "order-4711"
            try await ServiceContext.withValue(context) {
                _ = try await host.enterBackground()
            }
            #expect(requestIDs(host, "going to the background") == ["order-4711", "order-4711"])
        }
    }

    @Test("a run loop outlives the request that started it: its lines carry no request id")
    func runLoopsRunOutsideRequests() async throws {
        try await withTestHost(Self.services) { host in
            try await host.launched()
            _ = await host.logs.first { $0.message == "b run loop started" }
            #expect(requestIDs(host, "run loop started") == [nil, nil])
        }
    }
}
