import Foundation
import Testing

extension IntegrationSuites {
    /// What the README's set-up commands install: `scripts/run.sh` only what the build needs, and
    /// nothing any script installs listens on the network or enables a service on the machine.
    @Suite
    struct SetupScriptsTests {
        static let repository = GettingStartedPackageTests.repository

        static func packages(_ level: String) async throws -> [String] {
            let listed = try await ProcessRunner.run(["bash", Self.repository + "/scripts/deps.sh", level, "--list"])
            try #require(listed.succeeded, "\(listed)")
            return listed.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        }

        @Test("run.sh installs what building and running need, and no more")
        func runInstallsTheBuildOnly() async throws {
            let run = try String(contentsOfFile: Self.repository + "/scripts/run.sh", encoding: .utf8)
            #expect(run.contains("bash scripts/deps.sh build\n"), "run.sh does not install the build level")
            #expect(try await Self.packages("build") == ["libsystemd-dev", "libyaml-dev", "pkg-config"])
            let try_ = try await Self.packages("try")
            let test = try await Self.packages("test")
            #expect(Set(try await Self.packages("build")).isSubset(of: try_) && Set(try_).isSubset(of: test))
        }

        @Test("CI installs the build's packages itself, before anything else of the suite")
        func ciInstallsTheBuildsPackages() async throws {
            let ci = try String(contentsOfFile: Self.repository + "/.ci/run", encoding: .utf8)
            let install = try #require(ci.split(separator: "\n").first { $0.contains("apt-get install") && !$0.hasPrefix("#") }, "\(ci)")
            for package in try await Self.packages("build") {
                #expect(install.contains(" \(package)"), "\(package) is not in .ci/run's install line: \(install)")
            }
            // The commands, not the comments, in order.
            let commands = ci.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
            let order = ["apt-get update", "apt-get install", "scripts/deps.sh test", "scripts/test.sh"].map { commands.range(of: $0)?.lowerBound }
            #expect(order.allSatisfy { $0 != nil } && zip(order, order.dropFirst()).allSatisfy { $0! < $1! }, "\(ci)")
        }

        @Test("every apt-get install of the scripts skips recommends, and none installs Prometheus or node_exporter as a package")
        func installsNothingThatListens() async throws {
            for script in ["scripts/deps.sh", ".ci/run"] {
                let text = try String(contentsOfFile: Self.repository + "/" + script, encoding: .utf8)
                for line in text.split(separator: "\n") where line.contains("apt-get install") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
                    #expect(line.contains("--no-install-recommends"), "\(script): \(line)")
                }
            }
            let test = try await Self.packages("test")
            for listening in ["prometheus", "prometheus-node-exporter", "smartmontools", "nvme-cli"] {
                #expect(!test.contains(listening), "\(listening) would start a listener or a timer on the machine")
            }
        }

        /// A unit with an `[Install]` section is one a package's postinst enables. Essential
        /// packages are on every Debian machine already; templates are enabled per instance only.
        @Test("no package the scripts install (and that is installed here) ships a unit it would enable")
        func noPackageEnablesAUnit() async throws {
            for package in try await Self.packages("test") {
                let status = try await ProcessRunner.run(["dpkg-query", "-W", "-f", "${Essential} ${db:Status-Status}", package])
                guard status.succeeded, status.stdout.hasSuffix("installed") else { continue }
                if status.stdout.hasPrefix("yes") { continue }
                let files = try await ProcessRunner.run(["dpkg", "-L", package])
                try #require(files.succeeded, "\(files)")
                for path in files.stdout.split(separator: "\n").map(String.init)
                where path.contains("/systemd/") && [".service", ".socket", ".timer", ".path"].contains(where: path.hasSuffix) && !path.contains("@.") {
                    guard let unit = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
                    #expect(!unit.contains("\n[Install]"), "\(package) ships \(path), enabled on install")
                }
            }
        }
    }
}
