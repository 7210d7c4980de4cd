import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// README.md's "READY=1 when your server listens" as a package outside the repository: the
    /// host inside a Hummingbird application holds READY=1 until the HTTP port accepts
    /// connections.
    @Suite(.serialized, .buildsPackages)
    struct HummingbirdReadinessTests {
        static let repository = GettingStartedPackageTests.repository
        static let fixture = repository + "/Tests/Fixtures/HummingbirdReadiness"
        static let outside = FileManager.default.temporaryDirectory.path + "/apphostd-hello-server"
        static let scratch = repository + "/.build-hello"

        @Test("the README's block is the fixture's code")
        func fixtureMirrorsTheReadme() throws {
            let readme = try GettingStartedPackageTests.read(Self.repository + "/README.md")
            let blocks = try GettingStartedPackageTests.blocks("swift", in: readme, section: "## READY=1 when your server listens")
            #expect(blocks.count == 1)
            let source = try GettingStartedPackageTests.read(Self.fixture + "/Sources/HelloServer/HelloServer.swift")
            for block in blocks {
                #expect(GettingStartedPackageTests.unindented(source).contains(GettingStartedPackageTests.unindented(block)), "HelloServer.swift lacks:\n\(block)")
            }
        }

        @Test("the name-clash check is red on a planted clash: a module that exports Hummingbird's Router beside it")
        func plantedClashFailsTheBuild() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            let copy = try await ProcessRunner.run(["/bin/sh", "-c", "rm -rf \"$1\" && cp -r \"$2\" \"$1\"", "sh", Self.outside, Self.fixture])
            try #require(copy.succeeded, "\(copy)")
            let manifestPath = Self.outside + "/Package.swift"
            var manifest = try GettingStartedPackageTests.read(manifestPath)
                .replacingOccurrences(of: "path: \"../../..\"", with: "path: \"\(Self.repository)\"")
            // The plant: a module of a public type named as Hummingbird names one, imported by the
            // check, which names it unqualified as it names apphostd's.
            let checkTarget = "name: \"NameClashCheck\",\n            dependencies: [\n"
            try #require(manifest.contains(checkTarget))
            manifest = manifest.replacingOccurrences(of: checkTarget, with: checkTarget + "                \"PlantedClash\",\n")
                .replacingOccurrences(of: "        .target(\n            name: \"NameClashCheck\"", with: "        .target(name: \"PlantedClash\"),\n        .target(\n            name: \"NameClashCheck\"")
            try manifest.write(toFile: manifestPath, atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: Self.outside + "/Sources/PlantedClash", withIntermediateDirectories: true)
            try "public struct Router {}\n".write(toFile: Self.outside + "/Sources/PlantedClash/PlantedClash.swift", atomically: true, encoding: .utf8)
            let checkPath = Self.outside + "/Sources/NameClashCheck/NameClashCheck.swift"
            try (GettingStartedPackageTests.read(checkPath) + "import PlantedClash\nextension Router {}\n").write(toFile: checkPath, atomically: true, encoding: .utf8)

            let build = try await ProcessRunner.run(
                [swift, "build", "--package-path", Self.outside, "--scratch-path", Self.scratch, "--target", "NameClashCheck"],
                environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]),
                timeout: .seconds(1200)
            )
            #expect(!build.succeeded, "the planted clash built\n\(build)")
            #expect((build.stdout + build.stderr).contains("'Router' is ambiguous"), "\(build)")
        }

        /// A TCP port nobody listens on now.
        static func freePort() throws -> Int {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0 else { throw HarnessError("bind: errno \(errno)") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            return Int(UInt16(bigEndian: address.sin_port))
        }

        /// Whether a TCP connection to 127.0.0.1:`port` is accepted now.
        static func accepts(port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
        }

        @Test("READY=1 goes out only once the HTTP port accepts connections; STATUS= says what it waits for meanwhile")
        func readyOnlyWhenTheServerListens() async throws {
            let swift = try #require(IntegrationEnvironment.swiftDriver)
            let copy = try await ProcessRunner.run(["/bin/sh", "-c", "rm -rf \"$1\" && cp -r \"$2\" \"$1\"", "sh", Self.outside, Self.fixture])
            try #require(copy.succeeded, "\(copy)")
            let manifestPath = Self.outside + "/Package.swift"
            let manifest = try GettingStartedPackageTests.read(manifestPath)
            try #require(manifest.contains("path: \"../../..\""))
            try manifest.replacingOccurrences(of: "path: \"../../..\"", with: "path: \"\(Self.repository)\"")
                .write(toFile: manifestPath, atomically: true, encoding: .utf8)
            let build = try await ProcessRunner.run(
                [swift, "build", "--package-path", Self.outside, "--scratch-path", Self.scratch],
                environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]),
                timeout: .seconds(1200)
            )
            try #require(build.succeeded, "\(build)")
            let warnings = GettingStartedPackageTests.warnings(from: build, in: Self.repository + "/Sources/")
            #expect(warnings.isEmpty, "apphostd's sources warn in a user's build:\n\(warnings.joined(separator: "\n"))")

            let port = try Self.freePort()
            let server = (Self.scratch + "/debug/HelloServer", [String]())
            try await NotifyRecorder.with(config: "", program: server, environment: ["HELLO_PORT": "\(port)", "HELLO_START_DELAY_MS": "500"]) { running in
                let waiting = try await running.waitFor("STATUS= naming the wait") { $0.status?.contains("waiting for http") == true }
                #expect(!running.datagrams.prefix(waiting.index + 1).contains { $0.has("READY", "1") }, "\(running.diagnostics())")
                let ready = try await running.waitFor("READY=1") { $0.has("READY", "1") }
                #expect(Self.accepts(port: port), "READY=1 came before the port accepted connections\n\(running.diagnostics())")
                #expect(ready.status == "active · 0 services", "\(ready)")
                try running.send(SIGTERM)
                let exit = try await running.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(running.diagnostics())")
            }
        }
    }
}
