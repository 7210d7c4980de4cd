import AppHost
import AppHostServices
import AppHostTestKit
import Testing

/// The logger's audit trail lands in the log in the order things happened: each event's record
/// after every hook line of that event and before any hook line of the next.
@Suite struct LoggerRecordOrderTests {
    /// Logs `"<name> <hook>"` from each transition hook.
    struct Chatty: ApplicationService {
        let name: String

        func applicationWillResignActive(_ application: ApplicationHandle) async throws { say("willResignActive", application) }
        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws { say("didEnterBackground", application) }
        func applicationWillEnterForeground(_ application: ApplicationHandle) async throws { say("willEnterForeground", application) }
        func applicationDidBecomeActive(_ application: ApplicationHandle) async throws { say("didBecomeActive", application) }

        private func say(_ hook: String, _ application: ApplicationHandle) {
            application.logger.info("\(name) \(hook)")
        }
    }

    @Test("100 background/foreground round trips: every audit record between its event's hook lines and the next event's")
    func auditRecordsFollowTheirHooks() async throws {
        let logs = CapturedLogs()
        let services = [
            ServiceDescriptor(name: "logger", service: try LoggerService(configuration: ServiceSection())),
            ServiceDescriptor(name: "a", service: Chatty(name: "a")),
            ServiceDescriptor(name: "b", service: Chatty(name: "b")),
        ]
        let rounds = 100
        try await withTestHost(services, logs: logs) { host in
            try await host.launched()
            for _ in 0..<rounds {
                #expect(try await host.enterBackground())
                #expect(try await host.enterForeground())
            }
        }
        let events = ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"]
        // Each line as "hook <event>" (a service's own line) or "record <event>" (the audit trail).
        let lines: [String] = logs.messages.compactMap { message in
            let words = message.split(separator: " ")
            if words.count == 2, ["a", "b"].contains(words[0]), events.contains(String(words[1])) { return "hook \(words[1])" }
            if let event = message.split(separator: ":").first, events.contains(String(event)), message.contains(" → ") { return "record \(event)" }
            return nil
        }
        let launch = ["hook didBecomeActive", "hook didBecomeActive", "record didBecomeActive"]
        let round = events.flatMap { ["hook \($0)", "hook \($0)", "record \($0)"] }
        #expect(lines == launch + Array(repeating: round, count: rounds).flatMap { $0 })
    }
}
