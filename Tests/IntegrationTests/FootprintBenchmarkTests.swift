import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// Not pass/fail: Benchmarks/README.md's footprint against the floor (issue 54), measured
    /// inside the booted root, so that the libraries mapped at exec are that Debian's (libsystemd
    /// 256 and later load the journal's compression libraries only when needed). Run with
    /// `APPHOSTD_BENCH_FOOTPRINT=1 swift test --filter FootprintBenchmarkTests`, and again with
    /// `APPHOSTD_DEBIAN_RELEASE=trixie`: Benchmarks/process/footprint_bench.py with the release
    /// apphostd and ServiceGroupFloor built the same way, run as the user apphostd with the
    /// installed unit stopped, so that the measured instance owns the bus name.
    @Suite(
        .serialized, .needsSystemManager,
        .enabled(if: ProcessInfo.processInfo.environment["APPHOSTD_BENCH_FOOTPRINT"] == "1", "a benchmark: APPHOSTD_BENCH_FOOTPRINT=1 runs it"),
        .bootedSystem
    )
    struct FootprintBenchmarkTests {
        typealias Support = IntegrationSuites.SystemManagerTests

        /// ServiceGroupFloor, built as the release apphostd is (`scripts/build-release.sh --floor`).
        static func floor() async throws -> String {
            let build = try await ProcessRunner.run(
                ["/bin/bash", ReleaseBuild.repository + "/scripts/build-release.sh", "--floor", "--scratch-path", ReleaseBuild.repository + "/.build-floor"],
                environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]), timeout: .seconds(900)
            )
            try #require(build.succeeded, "\(build)")
            return ReleaseBuild.repository + "/.build-floor/release/ServiceGroupFloor"
        }

        @Test func readinessAndMemoryAgainstTheFloor() async throws {
            let system = try Support.system()
            let binary = try await ReleaseBuild.apphostd()
            let floor = try await Self.floor()
            let stop = try await system.systemctl("stop", Support.unit)
            try #require(stop.succeeded, "\(stop)")
            let bench = ReleaseBuild.repository + "/Benchmarks/process"
            for (source, name) in [(binary, "apphostd"), (floor, "ServiceGroupFloor"), (bench + "/footprint_bench.py", "footprint_bench.py"),
                                   (bench + "/process_bench.py", "process_bench.py"), (ReleaseBuild.repository + "/config/apphostd.yaml", "apphostd.yaml")] {
                let target = system.root + "/srv/" + name
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.copyItem(atPath: source, toPath: target)
            }
            let run = try await system.run(
                // As the user the shipped D-Bus policy lets own the bus name, in one go: the starts
                // stay a spawn, with no change of user in between.
                ["runuser", "-u", "apphostd", "--", "python3", "/srv/footprint_bench.py", "--binary", "/srv/apphostd", "--servicegroup-floor", "/srv/ServiceGroupFloor",
                 "--config", "/srv/apphostd.yaml", "--runs", "20", "--breakdown"],
                timeout: .seconds(900)
            )
            try #require(run.succeeded, "\(run)")
            print("IntegrationTests: footprint, systemd \(system.systemdVersion):\n\(run.stdout)")
        }
    }
}
