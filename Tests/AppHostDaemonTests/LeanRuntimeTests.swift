import Foundation
import Testing

/// The daemon's modules stay free of Foundation (issue 12): Foundation brings ICU, about 60 MB
/// of the static binary, 10 MiB of idle memory and 3 ms of every start.
@Suite("Lean runtime")
struct LeanRuntimeTests {
    static let daemonModules = ["AppHost", "AppHostSupport", "AppHostSystemd", "AppHostServices", "AppHostDaemon", "apphostd"]

    /// Every `import` line of the daemon's modules that names a Foundation module.
    static func foundationImports() throws -> [String] {
        var found: [String] = []
        for module in daemonModules {
            let directory = PackagePaths.root + "/Sources/" + module
            guard let files = FileManager.default.enumerator(atPath: directory) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { continue }
                    if words[..<index].allSatisfy({ ["@_exported", "@preconcurrency", "internal", "package", "public", "private", "fileprivate", "@testable"].contains($0) }),
                       words[index + 1].hasPrefix("Foundation") || words[index + 1].hasPrefix("_Foundation") {
                        found.append("Sources/\(module)/\(file):\(number + 1): \(line)")
                    }
                }
            }
        }
        return found
    }

    @Test("no daemon module imports Foundation, FoundationEssentials or FoundationInternationalization")
    func noFoundationImports() throws {
        #expect(FileManager.default.fileExists(atPath: PackagePaths.root + "/Sources/AppHostDaemon"), "the scan found the sources")
        let imports = try Self.foundationImports()
        #expect(imports.isEmpty, "Foundation imported in:\n\(imports.joined(separator: "\n"))")
    }
}
