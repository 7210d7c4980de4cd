import Foundation
import Testing

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
        .enabled(if: IntegrationEnvironment.swiftDriver != nil, "needs the swift toolchain on PATH")
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

        @Test("the fixture package builds against AppHost and AppHostSystemd")
        func fixtureBuilds() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            let result = try await ProcessRunner.run(
                [swift, "build", "--package-path", Self.fixture, "--scratch-path", Self.repository + "/.build-fixture"],
                environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]),
                timeout: .seconds(900)
            )
            #expect(result.succeeded, "\(result)")
        }
    }
}
