import Foundation
import Testing

extension IntegrationSuites.GettingStartedPackageTests {
    /// A Swift block of README.md or the getting-started article, by what the reader does with it.
    ///
    /// The rule, so that a block that drifts fails the build: a block that starts with its imports
    /// is a whole file and compiles alone, as its own target of the fixture's package; a block
    /// that starts `// swift-tools-version` or `// Package.swift` is a manifest, whose lines are
    /// in the fixture's; any other block is a fragment of a file, and appears as written in one of
    /// the fixtures.
    struct DocBlock: CustomStringConvertible {
        enum Kind: Equatable {
            /// A complete source file; `tests` when it holds `@Test` functions, `main` when it
            /// declares the `@main` type.
            case file(tests: Bool, main: Bool)
            case manifest
            case fragment
        }

        /// Where it is: the document and the block's number in it.
        let origin: String
        let text: String

        var kind: Kind {
            let firstLine = text.split(separator: "\n").first.map(String.init) ?? ""
            if firstLine.hasPrefix("// swift-tools-version") || firstLine.hasPrefix("// Package.swift") { return .manifest }
            if firstLine.hasPrefix("import ") { return .file(tests: text.contains("@Test"), main: text.contains("@main")) }
            return .fragment
        }

        var description: String { "\(origin):\n\(text)" }

        /// Every Swift block of the README and the article.
        static func all() throws -> [DocBlock] {
            let readme = try IntegrationSuites.GettingStartedPackageTests.read(IntegrationSuites.GettingStartedPackageTests.repository + "/README.md")
            let article = try IntegrationSuites.GettingStartedPackageTests.read(IntegrationSuites.GettingStartedPackageTests.article)
            let inReadme = try IntegrationSuites.GettingStartedPackageTests.blocks("swift", in: readme).enumerated()
                .map { DocBlock(origin: "README.md, Swift block \($0.offset + 1)", text: $0.element) }
            let inArticle = try IntegrationSuites.GettingStartedPackageTests.blocks("swift", in: article).enumerated()
                .map { DocBlock(origin: "GettingStarted.md, Swift block \($0.offset + 1)", text: $0.element) }
            return inReadme + inArticle
        }

        /// The lines that add each whole-file block to the fixture's manifest as a target of its
        /// own (`DocBlockN`), with every product a reader's package could name, and the sources
        /// to write (path relative to the package: contents).
        static func targets(for blocks: [DocBlock]) -> (manifest: String, sources: [String: String], tests: Int) {
            var manifest = "\n// The README's and the article's whole-file blocks, each compiled alone (GettingStartedPackageTests+DocBlocks).\n"
            var sources: [String: String] = [:]
            var tests = 0
            let products = ["AppHost", "AppHostSystemd", "AppHostDaemon", "AppHostServices"].map { ".product(name: \"\($0)\", package: \"apphostd\")" }
                + [".product(name: \"CoreMetrics\", package: \"swift-metrics\")", ".product(name: \"ServiceLifecycle\", package: \"swift-service-lifecycle\")", ".product(name: \"Logging\", package: \"swift-log\")"]
            let testProducts = ["AppHost", "AppHostTestKit"].map { ".product(name: \"\($0)\", package: \"apphostd\")" }
            for (index, block) in blocks.enumerated() {
                guard case .file(let isTests, let isMain) = block.kind else { continue }
                let name = "DocBlock\(index + 1)" + (isTests ? "Tests" : "")
                // A test block gets what the docs give a test target, no more: the package's one
                // test binary must still link no libsystemd.
                let dependencies = (["\"Heartbeat\""] + (isTests ? testProducts : products)).joined(separator: ", ")
                let kind = isTests ? "testTarget" : "executableTarget"
                manifest += "package.targets.append(.\(kind)(name: \"\(name)\", dependencies: [\(dependencies)], path: \"DocBlocks/\(name)\"))\n"
                // Top-level code (a daemon's entry point) compiles only in main.swift; a file with
                // `@main` must not be called that.
                let file = isTests || isMain ? "\(name).swift" : "main.swift"
                sources["DocBlocks/\(name)/\(file)"] = "// \(block.origin)\n" + block.text
                tests += isTests ? block.text.components(separatedBy: "@Test").count - 1 : 0
            }
            return (manifest, sources, tests)
        }
    }

    @Test("every Swift block of the README and the article is a file, a manifest or a fragment of a fixture, by the rule")
    func docBlocksFollowTheRule() throws {
        let blocks = try DocBlock.all()
        #expect(blocks.count >= 14, "\(blocks.count) blocks")
        // The rule must not quietly make everything a fragment: the files a reader copies whole.
        let files = blocks.filter { if case .file = $0.kind { true } else { false } }
        #expect(files.count >= 6, "only \(files.count) whole-file blocks:\n\(files)")
        #expect(files.contains { $0.text.contains("public struct Heartbeat") && $0.origin.hasPrefix("README") })
    }
}
