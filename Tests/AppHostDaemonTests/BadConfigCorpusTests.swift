import AppHost
import AppHostTestSupport
import Foundation
import Testing
@testable import AppHostDaemon
#if canImport(Glibc)
import Glibc
#endif

/// The bad-config corpus (issue 5): every broken file is refused with exactly one
/// `ConfigurationError`, which names the problem. `BadConfigs/expected.txt` lists `file<TAB>line<TAB>substring`
/// (line `-` when the error has none); files that cannot live in git (huge, symlink loop,
/// unreadable, directory, FIFO, missing) are made by the tests below.
@Suite("Bad config corpus")
struct BadConfigCorpusTests {
    struct Case: CustomStringConvertible, Sendable {
        let file: String
        let line: Int?
        let substring: String
        var description: String { file }
    }

    static let manifest: [Case] = {
        let path = PackagePaths.badConfigs + "/expected.txt"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { row in
            if row.hasPrefix("#") || row.isEmpty { return nil }
            let fields = row.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return Case(file: String(row), line: nil, substring: "<malformed manifest row>") }
            return Case(file: String(fields[0]), line: Int(fields[1]), substring: String(fields[2]))
        }
    }()

    let loader = ConfigurationLoader(registry: makeTestRegistry(), environment: [:])

    @Test func manifestCoversEveryFileAndAtLeastThirty() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: PackagePaths.badConfigs)
            .filter { $0.hasSuffix(".yaml") }
        #expect(Set(files) == Set(Self.manifest.map(\.file)), "every corpus file has a manifest row and every row a file")
        #expect(Self.manifest.count >= 30)
    }

    @Test(arguments: manifest)
    func corpusFileIsRefused(_ entry: Case) {
        let path = PackagePaths.badConfigs + "/" + entry.file
        let errors = configurationErrors { () throws(InvalidConfiguration) in try loader.load(path: path) }
        guard let errors else {
            Issue.record("\(entry.file) loaded without an error")
            return
        }
        // Each corpus file has one thing wrong: a second problem would be a follow-on error.
        #expect(errors.errors.count == 1, "\(errors)")
        let error = errors.first
        #expect(error.file == path)
        #expect(error.line == entry.line, "\(error)")
        #expect(error.description.contains(entry.substring), "\(error)")
        #expect(error.description.hasPrefix(path), "the message starts with the file")
    }

    @Test func hugeFileIsRefusedUnread() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/huge.yaml"
        let text = "services:\n  - logger\n" + String(repeating: "# " + String(repeating: "x", count: 97) + "\n", count: 11_000)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: path) }
        #expect(error?.description == "\(path): the file is too large (\(text.utf8.count) bytes; the limit is 1 MiB) (a config file is a few kilobytes; is this the right file?)")
    }

    @Test func symlinkLoopSaysELOOP() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = directory + "/a.yaml"
        let second = directory + "/b.yaml"
        try FileManager.default.createSymbolicLink(atPath: first, withDestinationPath: second)
        try FileManager.default.createSymbolicLink(atPath: second, withDestinationPath: first)
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: first) }
        #expect(error?.file == first)
        #expect(error?.message.contains("symbolic link loop (ELOOP") == true, "\(String(describing: error))")
    }

    @Test func symlinkToAGoodFileLoads() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let target = directory + "/real.yaml"
        try "services:\n  - logger\n".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link.yaml", withDestinationPath: target)
        let configuration = try loader.load(path: directory + "/link.yaml")
        #expect(configuration.services.map(\.name) == ["logger"])
        #expect(configuration.file == directory + "/link.yaml")
    }

    @Test func missingFileSaysENOENT() throws {
        let path = "/nonexistent-apphostd-\(getpid())/apphostd.yaml"
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: path) }
        #expect(error?.description == "\(path): cannot open the config file: no such file (ENOENT) (check the path, or pass --config FILE)")
    }

    @Test func directoryIsNotAConfigFile() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: directory) }
        #expect(error?.description.hasPrefix("\(directory): is a directory") == true, "\(String(describing: error))")
    }

    @Test func fifoIsRefusedWithoutBlocking() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo.yaml"
        #expect(mkfifo(path, 0o600) == 0)
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: path) }
        #expect(error?.message.contains("not a regular file") == true, "\(String(describing: error))")
    }

    // Root reads any file regardless of its mode; the integration suite (DaemonBadConfigTests)
    // covers this case as root by running the daemon without CAP_DAC_OVERRIDE.
    @Test(.disabled(if: geteuid() == 0, "running as root, which may read a mode-000 file (DaemonBadConfigTests covers it without CAP_DAC_OVERRIDE)"))
    func unreadableFileSaysEACCES() throws {
        let directory = try makeTemporaryDirectory("apphostd-badconfig")
        defer {
            chmod(directory + "/locked", 0o700)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let path = directory + "/unreadable.yaml"
        try "services:\n  - logger\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o000) == 0)
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(path: path) }
        #expect(error?.description == "\(path): cannot open the config file: permission denied (EACCES) (make it readable by the daemon's user)")
    }
}
