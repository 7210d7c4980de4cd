import AppHost
import AppHostSupport
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

@Suite("analytics")
struct AnalyticsServiceTests {
    static func service(_ settings: [String: SettingValue] = [:]) throws -> AnalyticsService {
        try AnalyticsService(configuration: ServiceSection(settings))
    }

    @Test func countsACycleAndTheNextLaunches() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            try await host.reload([ServiceDescriptor(name: "analytics", service: analytics)])
            try await host.enterBackground()
            try await host.setSessionLocked(true)
            try await host.setSessionLocked(false)
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .critical)
            try await host.receiveMemoryWarning(level: .warning)
            #expect(await eventually { analytics.report?.reloads == 1 })
        }

        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.launches == 1)
        #expect(report.firstLaunches == 1)
        #expect(report.cleanPreviousExits == 0 && report.uncleanPreviousExits == 0)
        #expect(report.backgroundEntries == 1 && report.foregroundEntries == 1 && report.transitions == 2)
        #expect(report.memoryWarnings == .init(warning: 1, critical: 1))
        #expect(report.sessionLocks == 1)
        #expect(report.reloads == 1)
        #expect(report.terminations == 1)
        #expect(report.foregroundSeconds > 0 && report.backgroundSeconds > 0)
        #expect(report == analytics.report)

        // A clean second run, then one that ends without terminate (the running marker stays).
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { _ in }
        let crashed = try PluggableApplicationHost(services: [ServiceDescriptor(name: "analytics", service: try Self.service())], configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await crashed.run() }
            try await crashed.launched()
            try await crashed.enterBackground()  // flushes the launch record
            // No terminate: cancelling run() stops the host at once, with no last calls and no
            // clean exit recorded, as if the process died.
            group.cancelAll()
        }
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { _ in }
        let after = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(after.launches == 4)
        #expect(after.firstLaunches == 1)
        #expect(after.cleanPreviousExits == 2)
        #expect(after.uncleanPreviousExits == 1)
        #expect(after.exitsByCause == ["clean": 2, "unknown": 1], "outside systemd only clean and unknown exist")
        #expect(after.terminations == 3)
    }

    @Test func flushesPendingEventsOnTheInterval() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service(["flush-interval": .string("50ms")])
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            let log = directory + "/state/analytics/events.log"
            let size = { (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0 }
            // The launch record is flushed by the run loop right after launch.
            #expect(await eventually { AnalyticsReport.load(at: directory)?.launches == 1 })
            let afterLaunch = size()
            try await host.setSessionLocked(true)  // recorded, not flushed by the hook
            #expect(await eventually { size() > afterLaunch })
            #expect(AnalyticsReport.load(at: directory)?.sessionLocks == 1)
        }
    }

    @Test("a clean terminate folds the log into summary.json: the next launch reads no records, and counts on")
    func cleanTerminateCompactsTheLog() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analyticsDirectory = directory + "/state/analytics"
        let logSize = { (try? FileManager.default.attributesOfItem(atPath: analyticsDirectory + "/events.log")[.size] as? Int) ?? -1 }
        // Far below the default compact-after (64 KiB): only the terminate compacts.
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { host in
            try await host.enterBackground()
            #expect(await eventually { logSize() > 0 }, "the background entry is flushed to the log")
        }
        #expect(logSize() == 0)
        let summary = try AnalyticsReport.loadSummary(directory: analyticsDirectory)
        #expect(summary.launches == 1 && summary.backgroundEntries == 1 && summary.terminations == 1)

        // A reload that removes analytics is no terminate: its log is left as it is.
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            #expect(await eventually { logSize() > 0 }, "the launch record is flushed after launch")
            try await host.reload([])
            #expect(logSize() > 0)
        }
        let reopened = try AnalyticsStore(directory: analyticsDirectory)
        #expect(reopened.report.launches == 2 && reopened.report.terminations == 1 && reopened.report.backgroundEntries == 1)
    }

    @Test("a terminate that cannot write summary.json appends its events to the log instead: nothing is lost")
    func terminateFallsBackToTheLogWhenTheSummaryCannotBeWritten() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analyticsDirectory = directory + "/state/analytics"
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { host in
            try await host.enterBackground()
            // A directory where the summary's temporary file goes: its write fails.
            try FileManager.default.createDirectory(atPath: analyticsDirectory + "/summary.json.tmp-\(getpid())", withIntermediateDirectories: true)
        }
        #expect(!FileManager.default.fileExists(atPath: analyticsDirectory + "/summary.json"))
        let reopened = try AnalyticsStore(directory: analyticsDirectory)
        #expect(reopened.report.launches == 1 && reopened.report.backgroundEntries == 1 && reopened.report.terminations == 1,
                "the terminate's own record reached the log")
    }

    @Test("a state directory deleted under a running store: the next flush recreates it with every count held in memory")
    func deletedDirectoryIsRecreatedFromMemory() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/state/analytics"
        let store = try AnalyticsStore(directory: directory)
        for _ in 0..<3 { _ = store.record(.background) }
        try store.flush(compactAfter: .max)
        try FileManager.default.removeItem(atPath: root + "/state")

        for _ in 0..<2 { _ = store.record(.background) }
        #expect(try store.flush(compactAfter: .max) == 2)
        #expect(store.takeRepairNotice()?.contains("was deleted while the daemon ran") == true)
        #expect(store.takeRepairNotice() == nil, "the notice is given once")
        #expect(try AnalyticsReport.load(stateDirectory: "", directory: directory).backgroundEntries == 5)

        // The recreated log takes later records as before.
        _ = store.record(.foreground)
        try store.flush(compactAfter: .max)
        let reopened = try AnalyticsStore(directory: directory)
        #expect(reopened.report.backgroundEntries == 5 && reopened.report.foregroundEntries == 1)
    }

    @Test(arguments: [
        (["flush-interval": SettingValue.string("often")], "flush-interval"),
        (["flush-interval": .string("1ms")], "flush-interval"),
        (["compact-after": .string("lots")], "compact-after"),
        (["compact-after": .int(0)], "compact-after"),
        (["compactAfter": .int(10)], "compactAfter"),
    ])
    func rejectsBadSettings(settings: [String: SettingValue], key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try AnalyticsService(configuration: ServiceSection(settings, keyPath: "services[0].settings"))
        }
        #expect(error?.keyPath == "services[0].settings.\(key)")
    }

    @Test func parsesSizes() {
        #expect(AnalyticsService.parseSize("64KiB") == 65536)
        #expect(AnalyticsService.parseSize("1M") == 1 << 20)
        #expect(AnalyticsService.parseSize("512B") == 512)
        #expect(AnalyticsService.parseSize("4096") == 4096)
        #expect(AnalyticsService.parseSize("-1") == nil)
    }
}

extension AnalyticsReport {
    /// Loads from an analytics directory itself (tests keep the store's files in a bare temp dir).
    static func load(stateDirectory _: String, directory: String) throws -> AnalyticsReport {
        var report = try loadSummary(directory: directory)
        report.fold(AnalyticsLog.scan(try AtomicFile.read(directory + "/" + AnalyticsStore.logName) ?? []).events)
        return report
    }

    /// The report of a test host's state directory, nil while unreadable.
    static func load(at testDirectory: String) -> AnalyticsReport? {
        try? load(stateDirectory: testDirectory + "/state")
    }
}
