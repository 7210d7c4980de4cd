import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// Not pass/fail: the figures of Benchmarks/README.md's "Sleep from logind". Under PID 1 with
    /// the real logind, for 4 and 100 services: a background request by `SIGRTMIN+1`, and a
    /// suspend's saving request from `PrepareForSleep(true)` to the inhibitor's release, each
    /// measured by the daemon (its debug lines: `duration_us`, `request_us` (since the durable persist,
    /// the disk write included), `release_us`). Run with `APPHOSTD_BENCH_LOGIND=1 swift test --filter LogindBenchmarkTests`.
    @Suite(
        .serialized, .needsSystemManager,
        .enabled(if: ProcessInfo.processInfo.environment["APPHOSTD_BENCH_LOGIND"] == "1", "a benchmark: APPHOSTD_BENCH_LOGIND=1 runs it"),
        .bootedSystem
    )
    struct LogindBenchmarkTests {
        typealias Suite = IntegrationSuites.SystemManagerTests
        static let rounds = 30

        static func median(_ values: [Int]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return .nan }
            return Double(sorted[sorted.count / 2]) / 1000
        }

        /// 4 services (the shipped config), and 100 with 96 probes that log each hook to the
        /// journal (as probes do) or, `quiet`, record it in a file in the state directory.
        @Test(arguments: [(4, false), (100, false), (100, true)])
        func aSleepBesideASignal(services: Int, quiet: Bool) async throws {
            guard let system = SystemManager.current else { throw HarnessError("no booted system") }
            let good = try system.read(Suite.configPath)
            let record = quiet ? "    settings:\n      record-to: /var/lib/apphostd/probes.log\n" : ""
            let probes = (0..<(services - 4)).map { "  - name: p\($0)\n    type: probe\n" + record }.joined()
            try system.write(good + probes, to: Suite.configPath)
            defer { try? system.write(good, to: Suite.configPath) }
            try await system.systemctl("restart", Suite.unit, timeout: .seconds(120))
            try await Suite.waitForStatus(system, "active with \(services) services") { $0["StatusText"]?.hasPrefix("active · \(services) services") == true }
            try await system.systemctl("service-log-level", Suite.unit, "debug")
            try await Suite.waitForInhibitors(system)
            let invocation = try await Suite.invocation(system)
            let cursor = try await system.journalCursor()
            for _ in 0..<Self.rounds {
                try await system.systemctl("kill", "-s", "SIGRTMIN+1", Suite.unit)
                try await Suite.waitForStatus(system, "background") { $0["StatusText"]?.hasPrefix("background") == true }
                try await system.systemctl("kill", "-s", "SIGRTMIN+2", Suite.unit)
                try await Suite.waitForStatus(system, "active") { $0["StatusText"]?.hasPrefix("active") == true }
            }
            for _ in 0..<Self.rounds {
                try await system.suspend()
                try await Suite.waitForStatus(system, "resumed") { $0["StatusText"]?.hasPrefix("active (resume)") == true }
            }
            let records = try await system.journal(["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor)
            let values = { (message: String, field: String) in
                records.filter { $0["MESSAGE"]?.hasPrefix(message) == true }.compactMap { $0[field].flatMap { Int($0) } }
            }
            let signal = values("SIGRTMIN+1 carried out in", "DURATION_US")
            let request = values("ready for sleep after", "REQUEST_US")
            let release = values("sleep inhibitor released", "RELEASE_US")
            print("""
                IntegrationTests: logind benchmark, systemd \(system.systemdVersion), \(services) services\(quiet ? " (probes record to a file)" : ""), \(Self.rounds) rounds, p50 in ms: \
                SIGRTMIN+1 request \(Self.median(signal)) (n=\(signal.count)); sleep: request with the state on disk \(Self.median(request)), \
                PrepareForSleep to release \(Self.median(release)) (n=\(release.count))
                """)
            #expect(release.count == Self.rounds && signal.count == Self.rounds)
            try await system.systemctl("service-log-level", Suite.unit, "info")
        }
    }
}
