import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationEnvironment {
    /// The `swift` driver on PATH, which builds the fixture packages.
    static let swiftDriver: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { $0 + "/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why the suites that build packages with the toolchain and run what they built cannot run
    /// here, or nil when they can.
    static let packageBuildProblem: String? =
        if ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] == "1" { "APPHOSTD_SKIP_INTEGRATION=1" }
        else if swiftDriver == nil { "needs the swift toolchain on PATH" }
        else { directDaemonProblem.map { "needs the built binaries: \($0)" } }
}

extension Trait where Self == ConditionTrait {
    /// For a suite that builds packages with the toolchain and runs what they built: skipped,
    /// with the reason printed, where it cannot.
    static var buildsPackages: Self {
        .disabled(if: IntegrationEnvironment.packageBuildProblem != nil, Comment(rawValue: IntegrationEnvironment.packageBuildProblem ?? ""))
    }
}

extension IntegrationSuites {
    /// The getting-started article (Sources/AppHost/AppHost.docc/GettingStarted.md) and README.md's
    /// "Write your own service" as a package outside the repository: what a Swift developer copies
    /// from them compiles against the library products, its test passes with the test kit, and its
    /// programs run.
    @Suite(.serialized, .buildsPackages)
    struct GettingStartedPackageTests {
        static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        static let fixture = repository + "/Tests/Fixtures/GettingStarted"
        static let article = repository + "/Sources/AppHost/AppHost.docc/GettingStarted.md"
        /// Outside the repository, as a user's package would be; a fixed place per checkout, so
        /// that a second run builds incrementally and two checkouts' runs do not share it.
        static let outside = FileManager.default.temporaryDirectory.path + "/apphostd-getting-started" + repository.replacingOccurrences(of: "/", with: "_")
        static let scratch = repository + "/.build-fixture"

        /// The code blocks of `language` in `text` (from `start` to the next `## ` heading, when given).
        static func blocks(_ language: String, in text: String, section start: String? = nil) throws -> [String] {
            var text = Substring(text)
            if let start {
                guard let begin = text.range(of: start) else { throw HarnessError("no section \(start)") }
                let end = text.range(of: "\n## ", range: begin.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
                text = text[begin.upperBound..<end]
            }
            return text.components(separatedBy: "```\(language)\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        }

        static func read(_ path: String) throws -> String {
            try String(contentsOfFile: path, encoding: .utf8)
        }

        /// `text` with every line's leading spaces removed.
        static func unindented(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.drop { $0 == " " } }.joined(separator: "\n")
        }

        /// The compiler's warnings about files under `prefix` in a build's output (a build from
        /// scratch, as CI's is, shows every one).
        static func warnings(from build: CommandResult, in prefix: String) -> [String] {
            (build.stdout + "\n" + build.stderr).split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix(prefix) && $0.contains(": warning: ") }
        }

        /// Every Swift source of the fixtures (this package and HummingbirdReadiness), by path.
        static func fixtureSources() throws -> [String: String] {
            var sources: [String: String] = [:]
            for folder in [fixture, repository + "/Tests/Fixtures/HummingbirdReadiness"] {
                let enumerator = FileManager.default.enumerator(atPath: folder)
                while let path = enumerator?.nextObject() as? String {
                    if path.hasSuffix(".swift"), !path.hasPrefix(".build") { sources[folder + "/" + path] = try read(folder + "/" + path) }
                }
            }
            return sources
        }

        @Test("the fixture package holds the docs' manifests' lines and their fragments as written, and the article's config and unit")
        func fixtureMirrorsTheDocs() throws {
            let sources = try Self.fixtureSources()
            let manifest = try #require(sources[Self.fixture + "/Package.swift"])
            for block in try DocBlock.all() {
                switch block.kind {
                case .manifest:
                    // Every target and product line is in the fixture's, which sits three folders
                    // below apphostd instead of beside it.
                    for line in block.text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) })
                    where line.hasPrefix(".") || line.hasPrefix("name:") {
                        let fixtureLine = line.replacingOccurrences(of: "path: \"../apphostd\"", with: "path: \"../../..\"")
                        #expect(manifest.contains(fixtureLine), "the fixture's Package.swift lacks \(fixtureLine) (\(block.origin))")
                    }
                case .fragment:
                    // As written, but for how deep the block sits in the file.
                    let unindented = Self.unindented(block.text)
                    #expect(sources.values.contains { Self.unindented($0).contains(unindented) }, "no fixture file holds this fragment: \(block)")
                case .file:
                    // Compiled alone by fixtureBuildsTestsAndRuns, and a file of the package the
                    // docs build.
                    let unindented = Self.unindented(block.text)
                    #expect(sources.values.contains { Self.unindented($0).contains(unindented) }, "no fixture file holds this file: \(block)")
                }
            }
            #expect(try Self.blocks("yaml", in: Self.read(Self.article)) == [Self.read(Self.fixture + "/heartbeatd.yaml"), Self.read(Self.fixture + "/heartbeatd-composites.yaml")])
            #expect(try Self.blocks("ini", in: Self.read(Self.article)) == [Self.read(Self.fixture + "/heartbeatd.service")])
            // The README's walk from an empty folder to the unit: the same config and unit.
            let readme = try Self.read(Self.repository + "/README.md")
            #expect(try Self.blocks("yaml", in: readme, section: "## Write your own service") == [Self.read(Self.fixture + "/heartbeatd.yaml")])
            #expect(try Self.blocks("ini", in: readme, section: "## Write your own service") == [Self.read(Self.fixture + "/heartbeatd.service")])
        }

        /// A Swift Testing binary on Linux links Foundation by itself, so `ldd` cannot show
        /// whether the kit brings it; the kit's modules' own imports and dependencies can.
        @Test("the test kit depends on AppHost and swift-log only, and neither it nor AppHost imports Foundation")
        func testKitImportsNoFoundation() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            let described = try await ProcessRunner.run([swift, "package", "--package-path", Self.repository, "--ignore-lock", "describe", "--type", "json"], timeout: .seconds(300))
            try #require(described.succeeded, "\(described)")
            let package = try #require(try JSONSerialization.jsonObject(with: Data(described.stdout.utf8)) as? [String: Any])
            let targets = try #require(package["targets"] as? [[String: Any]])
            let kit = try #require(targets.first { $0["name"] as? String == "AppHostTestKit" })
            #expect(Set(kit["target_dependencies"] as? [String] ?? []) == ["AppHost"], "\(kit)")
            #expect(Set(kit["product_dependencies"] as? [String] ?? []) == ["Logging"], "\(kit)")

            let foundation = try Regex(#"^\s*(@\w+\s+)*import\s+(class\s+|struct\s+|enum\s+|func\s+)?Foundation\w*"#).anchorsMatchLineEndings()
            var offenders: [String] = []
            for module in ["AppHostTestKit", "AppHost"] {
                let folder = Self.repository + "/Sources/" + module
                let enumerator = FileManager.default.enumerator(atPath: folder)
                var count = 0
                while let path = enumerator?.nextObject() as? String {
                    guard path.hasSuffix(".swift") else { continue }
                    count += 1
                    if try Self.read(folder + "/" + path).contains(foundation) { offenders.append(module + "/" + path) }
                }
                #expect(count > 5, "\(module): only \(count) sources found")
            }
            #expect(offenders.isEmpty, "import Foundation in \(offenders)")
        }

        @Test("the package builds outside the repository, its test passes with the test kit, heartbeatd runs under its own name, and MyProgram follows the signal map")
        func fixtureBuildsTestsAndRuns() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            // A copy outside the repository, depending on apphostd by its absolute path.
            let copy = try await ProcessRunner.run(["/bin/sh", "-c", "rm -rf \"$1\" && cp -r \"$2\" \"$1\"", "sh", Self.outside, Self.fixture])
            try #require(copy.succeeded, "\(copy)")
            let manifestPath = Self.outside + "/Package.swift"
            let manifest = try Self.read(manifestPath)
            try #require(manifest.contains("path: \"../../..\""))
            // Each whole-file block of the README and the article compiles alone, as a target of
            // its own beside the fixture's.
            let docTargets = DocBlock.targets(for: try DocBlock.all())
            try (manifest.replacingOccurrences(of: "path: \"../../..\"", with: "path: \"\(Self.repository)\"") + docTargets.manifest)
                .write(toFile: manifestPath, atomically: true, encoding: .utf8)
            for (path, text) in docTargets.sources {
                let url = URL(fileURLWithPath: Self.outside + "/" + path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try text.write(to: url, atomically: true, encoding: .utf8)
            }
            let environment = ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])

            let build = try await ProcessRunner.run(
                [swift, "build", "--package-path", Self.outside, "--scratch-path", Self.scratch],
                environment: environment, timeout: .seconds(900)
            )
            try #require(build.succeeded, "\(build)")
            let warnings = Self.warnings(from: build, in: Self.repository + "/Sources/")
            #expect(warnings.isEmpty, "apphostd's sources warn in a user's build:\n\(warnings.joined(separator: "\n"))")
            let own = Self.warnings(from: build, in: Self.outside + "/")
            #expect(own.isEmpty, "the article's code warns:\n\(own.joined(separator: "\n"))")
            let test = try await ProcessRunner.run(
                [swift, "test", "--package-path", Self.outside, "--scratch-path", Self.scratch],
                environment: environment, timeout: .seconds(900)
            )
            #expect(test.succeeded, "\(test)")
            let testWarnings = Self.warnings(from: test, in: Self.outside + "/") + Self.warnings(from: test, in: Self.repository + "/Sources/")
            #expect(testWarnings.isEmpty, "the fixture's tests build with warnings:\n\(testWarnings.joined(separator: "\n"))")
            #expect(test.stdout.contains("Test run with \(6 + docTargets.tests) tests") && test.stdout.contains("passed"), "\(test)")

            // The test kit links what it needs and no more: a user's test binary that tests a
            // service with it does not link libsystemd (so its machine needs no libsystemd-dev).
            let testBinary = Self.scratch + "/debug/HeartbeatPackageTests.xctest"
            let linked = try await ProcessRunner.run(["ldd", testBinary])
            try #require(linked.succeeded, "\(linked)")
            #expect(linked.stdout.contains("libswift_Concurrency"), "\(linked)")
            #expect(!linked.stdout.contains("libsystemd"), "the test kit's user links libsystemd:\n\(linked.stdout)")

            // heartbeatd: its own name, version and config check.
            let heartbeatd = Self.scratch + "/debug/heartbeatd"
            let version = try await ProcessRunner.run([heartbeatd, "--version"])
            #expect(version.stdout == "1.0.0\n", "\(version)")
            let help = try await ProcessRunner.run([heartbeatd, "run", "--help"])
            #expect(help.stdout.contains("USAGE: heartbeatd run") && help.stdout.contains("/etc/heartbeatd/heartbeatd.yaml"), "\(help)")
            let check = try await ProcessRunner.run([heartbeatd, "check", "--config", Self.outside + "/heartbeatd.yaml"])
            #expect(check.status == 0 && check.stdout.contains("2 services (logger, heartbeat)"), "\(check)")
            let composites = try await ProcessRunner.run([heartbeatd, "check", "--config", Self.outside + "/heartbeatd-composites.yaml"])
            #expect(composites.status == 0 && composites.stdout.contains("4 services (logger, beat (first-of: hardware, fallback), export (one-of: logger, by EXPORT not set, the default), extras (group: analytics, lock))"), "\(composites)")

            // heartbeatd run: ready, the service's own log lines, a clean stop.
            let config = try Self.read(Self.fixture + "/heartbeatd.yaml")
                .replacingOccurrences(of: "host:\n", with: "host:\n  state-directory: \(NotifyRecorder.stateToken)\n")
            try await NotifyRecorder.with(config: config, program: (heartbeatd, nil)) { running in
                try await running.waitFor("READY=1") { $0.has("READY", "1") }
                try await running.waitFor("STATUS= with both services") { $0.status?.hasPrefix("active · 2 services") == true }
                try running.send(SIGUSR1)
                try await running.waitFor("background") { $0.status?.hasPrefix("background") == true }
                try running.send(SIGTERM)
                let exit = try await running.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(running.diagnostics())")
                let stderr = running.stderr
                #expect(stderr.contains("launch #1, previous exit: none") && stderr.contains("flushing before background"), "\(running.diagnostics())")
                #expect(stderr.contains("heartbeatd"), "\(running.diagnostics())")
                // Its messages name its own commands, never apphostd's.
                #expect(!stderr.contains("apphostd status"), "\(running.diagnostics())")
            }

            // MyProgram: a host embedded in a program's own ServiceGroup with the signal service
            // gets the whole signal map, as apphostd does (without it, SIGUSR1 killed the program).
            try await NotifyRecorder.with(config: "", program: (Self.scratch + "/debug/MyProgram", [])) { running in
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
