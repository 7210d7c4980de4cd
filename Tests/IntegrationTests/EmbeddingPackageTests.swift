import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationEnvironment {
    /// The `swift` driver on PATH, which builds the fixture packages.
    static let swiftDriver: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { $0 + "/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

extension IntegrationSuites {
    /// README.md's "The host in your own ServiceGroup" as a package of its own: what a Swift
    /// developer copies from the README compiles against the library products.
    @Suite(
        .serialized,
        .enabled(if: ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] != "1", "APPHOSTD_SKIP_INTEGRATION=1"),
        .enabled(if: IntegrationEnvironment.swiftDriver != nil, "needs the swift toolchain on PATH"),
        .enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the built binaries (reason printed)")
    )
    struct EmbeddingPackageTests {
        static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        static let fixture = repository + "/Tests/Fixtures/EmbeddingPackage"

        /// The Swift code blocks of the README section that shows the embedding.
        static func readmeBlocks() throws -> [String] {
            let readme = try String(contentsOfFile: repository + "/README.md", encoding: .utf8)
            guard let start = readme.range(of: "## Write your own service"), let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex) else {
                throw HarnessError("README.md has no \"Write your own service\" section")
            }
            return readme[start.upperBound..<end.lowerBound].components(separatedBy: "```swift\n").dropFirst().map { block in
                block.components(separatedBy: "```").first ?? ""
            }
        }

        @Test("the fixture package holds the README's code as written: the service, the program, the package lines")
        func fixtureMirrorsTheReadme() throws {
            let blocks = try Self.readmeBlocks()
            let heartbeat = try String(contentsOfFile: Self.fixture + "/Sources/MyProgram/Heartbeat.swift", encoding: .utf8)
            let program = try String(contentsOfFile: Self.fixture + "/Sources/MyProgram/MyProgram.swift", encoding: .utf8)
            let manifest = try String(contentsOfFile: Self.fixture + "/Package.swift", encoding: .utf8)
            let service = try #require(blocks.first { $0.contains("struct Heartbeat") })
            let main = try #require(blocks.first { $0.contains("struct MyProgram") })
            let packageLines = try #require(blocks.first { $0.hasPrefix("// Package.swift") })
            #expect(heartbeat == service)
            #expect(program == main)
            for line in packageLines.split(separator: "\n") where line.hasPrefix(".product(") || line.hasPrefix(".package(url:") {
                #expect(manifest.contains(line), "Package.swift lacks the README's \(line)")
            }
        }

        @Test("the fixture package builds, and the program follows the signal map: SIGUSR1 to the background, SIGRTMIN+2 to the foreground, SIGTERM terminates and it exits 0")
        func fixtureBuildsAndFollowsTheSignalMap() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            let scratch = Self.repository + "/.build-fixture"
            let environment = ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
            let build = try await ProcessRunner.run(
                [swift, "build", "--package-path", Self.fixture, "--scratch-path", scratch],
                environment: environment, timeout: .seconds(900)
            )
            try #require(build.succeeded, "\(build)")
            let program = scratch + "/debug/MyProgram"

            // A host embedded in a program's own ServiceGroup with the signal service gets the
            // whole signal map, as apphostd does (without it, SIGUSR1 killed the program).
            try await NotifyRecorder.with(config: "", program: (program, [])) { running in
                try await running.waitFor("READY=1") { $0.has("READY", "1") }
                try running.send(SIGUSR1)
                try await running.waitFor("background") { $0.status?.hasPrefix("background") == true }
                try running.send(NotifyRecorder.realtime(2))
                try await running.waitFor("active again") { $0.status?.hasPrefix("active") == true && $0.fields["READY"] == nil }
                try running.send(SIGTERM)
                try await running.waitFor("STOPPING=1") { $0.has("STOPPING", "1") }
                let exit = try await running.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(running.diagnostics())")
            }
        }
    }
}
