import AppHostSupport
import AppHostTestKit
import AppHostTestSupport
import CoreMetrics
import Glibc
import Prometheus
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import AppHostSystemd

@Suite struct TextfileMetricsFactoryTests {
    @Test("every series carries the daemon label; a user's own daemon label becomes exported_daemon")
    func everySeriesCarriesTheDaemonLabel() {
        let factory = TextfileMetricsFactory(daemon: "kiosk-3", logger: CapturedLogs().logger())
        CoreMetrics.Counter(label: "orders_total", factory: factory).increment(by: 2)
        CoreMetrics.Gauge(label: "queue_depth", dimensions: [("daemon", "mine"), ("queue", "a")], factory: factory).record(7)
        let text = String(decoding: factory.render(), as: UTF8.self)
        let values = prometheusSamples(text)
        #expect(values[#"orders_total{daemon="kiosk-3"}"#] == "2")
        #expect(values[#"queue_depth{daemon="kiosk-3",exported_daemon="mine",queue="a"}"#] == "7.0")
    }

    @Test("names and label names are made valid for Prometheus, and a repeated label is dropped, never a crash")
    func namesAreMadeValid() {
        let factory = TextfileMetricsFactory(daemon: "d", logger: CapturedLogs().logger())
        CoreMetrics.Counter(label: "my.requests-total", dimensions: [("http.method", "GET"), ("http.method", "PUT"), ("__reserved", "x")], factory: factory).increment()
        CoreMetrics.Counter(label: "9lives", factory: factory).increment()
        let values = prometheusSamples(String(decoding: factory.render(), as: UTF8.self))
        #expect(values[#"my_requests_total{daemon="d",http_method="GET",x__reserved="x"}"#] == "1")
        #expect(values[#"_9lives{daemon="d"}"#] == "1")
    }

    @Test("a name reused as another kind records nowhere and is logged once, where swift-prometheus would stop the process")
    func aNameReusedAsAnotherKindIsRefused() {
        let logs = CapturedLogs()
        let factory = TextfileMetricsFactory(daemon: "d", logger: logs.logger())
        CoreMetrics.Counter(label: "jobs", factory: factory).increment()
        CoreMetrics.Timer(label: "jobs", factory: factory).recordNanoseconds(5)
        CoreMetrics.Timer(label: "jobs", dimensions: [("kind", "x")], factory: factory).recordNanoseconds(5)
        CoreMetrics.Gauge(label: "jobs", factory: factory).record(1)
        // Spelt differently, the same name once made valid.
        CoreMetrics.Gauge(label: "jobs.", factory: factory).record(1)
        CoreMetrics.Counter(label: "jobs_", factory: factory).increment()
        let text = String(decoding: factory.render(), as: UTF8.self)
        #expect(prometheusSamples(text)[#"jobs{daemon="d"}"#] == "1")
        #expect(!text.contains("jobs_bucket"))
        #expect(text.contains(#"jobs_{daemon="d"} 1.0"#))
        let refusals = logs.all.filter { $0.message.hasPrefix("metrics: jobs is already a counter") }
        #expect(refusals.count == 2, "one line per refused kind: \(logs.messages)")
        #expect(logs.all.filter { $0.message.hasPrefix("metrics: jobs_ is already a gauge") }.count == 1)
    }

    @Test("label values are escaped once, by swift-prometheus")
    func labelValuesAreEscapedOnce() {
        let factory = TextfileMetricsFactory(daemon: #"a"b\c"#, logger: CapturedLogs().logger())
        CoreMetrics.Counter(label: "c", factory: factory).increment()
        let text = String(decoding: factory.render(), as: UTF8.self)
        #expect(text.contains(#"c{daemon="a\"b\\c"} 1"#))
    }

    @Test("every record says that a figure changed")
    func everyRecordSaysSo() {
        let changes = Counted()
        let factory = TextfileMetricsFactory(daemon: "d", logger: CapturedLogs().logger()) { changes.add() }
        let counter = CoreMetrics.Counter(label: "c", factory: factory)
        counter.increment()
        CoreMetrics.Timer(label: "t", factory: factory).recordNanoseconds(1)
        CoreMetrics.Gauge(label: "g", factory: factory).record(1)
        CoreMetrics.Meter(label: "m", factory: factory).set(2)
        #expect(changes.value == 4)
    }

    @Test("a counter set to a kept total (reset, then increment) never renders the 0 in between")
    func aResetWaitsForTheIncrementAfterIt() {
        let factory = TextfileMetricsFactory(daemon: "d", logger: CapturedLogs().logger())
        let counter = CoreMetrics.Counter(label: "apphost_launches_total", factory: factory)
        counter.increment(by: 41)
        counter.reset()
        #expect(prometheusSamples(String(decoding: factory.render(), as: UTF8.self))[#"apphost_launches_total{daemon="d"}"#] == "41")
        counter.increment(by: 42)
        #expect(prometheusSamples(String(decoding: factory.render(), as: UTF8.self))[#"apphost_launches_total{daemon="d"}"#] == "42")
        counter.increment()
        #expect(prometheusSamples(String(decoding: factory.render(), as: UTF8.self))[#"apphost_launches_total{daemon="d"}"#] == "43")
    }
}

@Suite struct MetricsTextfileEdgeTests {
    @Test("a change is written at once, 0644, no timestamps, by rename: nothing else is left in the directory")
    func aChangeIsWrittenAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let textfile = MetricsTextfileEdge(path: directory.path + "/app.prom", daemon: "app", logger: logs.logger())
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await textfile.run() }
            CoreMetrics.Counter(label: "apphost_launches_total", factory: textfile.factory).increment()
            #expect(await logs.first { $0.message == "metrics textfile written" } != nil)
            group.cancelAll()
        }
        let text = try #require(readText(directory.path + "/app.prom"))
        #expect(prometheusSamples(text)[#"apphost_launches_total{daemon="app"}"#] == "1")
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").count == 2, "a sample with a timestamp: \(line)")
        }
        var info = stat()
        #expect(stat(directory.path + "/app.prom", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644)
        #expect(directoryEntries(directory.path) == ["app.prom"])
    }

    @Test("a burst of changes is written at most once per interval, the newest figures last")
    func aBurstIsCoalesced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let textfile = MetricsTextfileEdge(path: directory.path + "/app.prom", daemon: "app", logger: logs.logger(), minimumInterval: .milliseconds(300))
        let counter = CoreMetrics.Counter(label: "events_total", factory: textfile.factory)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await textfile.run() }
            for _ in 0..<1000 { counter.increment() }
            #expect(await logs.first { $0.message == "metrics textfile written" } != nil)
            for _ in 0..<1000 { counter.increment() }
            // The second write waits out the interval, then has every change.
            #expect(await logs.records.first { record in
                record.message == "metrics textfile written" && prometheusSamples(readText(directory.path + "/app.prom") ?? "")[#"events_total{daemon="app"}"#] == "2000"
            } != nil)
            group.cancelAll()
        }
        let writes = logs.all.filter { $0.message == "metrics textfile written" }.count
        #expect(writes >= 2 && writes <= 4, "2000 changes in a burst: \(writes) writes")
    }

    @Test("graceful shutdown writes the last figures at once, without waiting out the interval")
    func shutdownWritesTheLastFigures() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let textfile = MetricsTextfileEdge(path: directory.path + "/app.prom", daemon: "app", logger: logs.logger(), minimumInterval: .seconds(3600))
        let gauge = CoreMetrics.Gauge(label: "apphost_state", dimensions: [("state", "notRunning")], factory: textfile.factory)
        let clock = ContinuousClock()
        let start = clock.now
        await testGracefulShutdown { trigger in
            await withDiscardingTaskGroup { group in
                group.addTask { await textfile.run() }
                gauge.record(0)
                _ = await logs.first { $0.message == "metrics textfile written" }
                gauge.record(1)
                trigger.triggerGracefulShutdown()
            }
        }
        #expect(clock.now - start < .seconds(60))
        #expect(prometheusSamples(readText(directory.path + "/app.prom") ?? "")[#"apphost_state{daemon="app",state="notRunning"}"#] == "1.0")
    }

    @Test("a directory that is missing is a warning, logged once; the next change after it appears is written")
    func aMissingDirectoryIsAWarning() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let path = directory.path + "/later/app.prom"
        let textfile = MetricsTextfileEdge(path: path, daemon: "app", logger: logs.logger(), minimumInterval: .milliseconds(10))
        let counter = CoreMetrics.Counter(label: "c", factory: textfile.factory)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await textfile.run() }
            counter.increment()
            let warning = await logs.first { $0.message.hasPrefix("metrics: cannot write the textfile") }
            #expect(warning?.level == .warning)
            #expect(warning?.message.contains("No such file or directory") == true, "\(warning?.message ?? "")")
            counter.increment()
            counter.increment()
            #expect(mkdir(directory.path + "/later", 0o755) == 0)
            counter.increment()
            #expect(await logs.first { $0.message == "metrics: \(path) written again" } != nil)
            group.cancelAll()
        }
        #expect(logs.all.filter { $0.message.hasPrefix("metrics: cannot write the textfile") }.count == 1)
        #expect(prometheusSamples(readText(path) ?? "")[#"c{daemon="app"}"#] == "4")
    }

    @Test("record-exit's rewrite: notRunning 1, the other states 0, unhealthy, every other line kept")
    func markNotRunning() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/app.prom"
        let factory = TextfileMetricsFactory(daemon: "app", logger: CapturedLogs().logger())
        for state in ["notRunning", "active", "background"] {
            CoreMetrics.Gauge(label: "apphost_state", dimensions: [("state", state)], factory: factory).record(state == "active" ? 1 : 0)
        }
        CoreMetrics.Gauge(label: "apphost_healthy", factory: factory).record(1)
        CoreMetrics.Counter(label: "apphost_launches_total", factory: factory).increment(by: 7)
        try AtomicFile.write(factory.render(), to: path, permissions: 0o644)
        #expect(try MetricsTextfileEdge.markNotRunning(path: path))
        let values = prometheusSamples(readText(path) ?? "")
        #expect(values[#"apphost_state{daemon="app",state="notRunning"}"#] == "1")
        #expect(values[#"apphost_state{daemon="app",state="active"}"#] == "0")
        #expect(values[#"apphost_state{daemon="app",state="background"}"#] == "0")
        #expect(values[#"apphost_healthy{daemon="app"}"#] == "0")
        #expect(values[#"apphost_launches_total{daemon="app"}"#] == "7")
        #expect(try !MetricsTextfileEdge.markNotRunning(path: directory.path + "/none.prom"))
    }
}

/// The file's text, nil when it cannot be read.
func readText(_ path: String) -> String? {
    (try? AtomicFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
}

/// The names in `directory`, sorted, without `.` and `..`.
func directoryEntries(_ directory: String) -> [String] {
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    var names: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafePointer(to: entry.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
        if name != ".", name != ".." { names.append(name) }
    }
    return names.sorted()
}

/// A thread-safe count.
final class Counted: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
