@testable import AppHostDaemon
import AppHost
import AppHostServices
import Foundation
import Testing

/// The man pages (deploy/man, scdoc) against what the program knows: every command, option,
/// signal and exit status of `--help` in apphostd(8), every key the config loader and the
/// built-in services take in apphostd.yaml(5). A key added to the loader and not to the page
/// fails here.
@Suite struct ManPageTests {
    static let daemonPage = PackagePaths.root + "/deploy/man/apphostd.8.scd"
    static let configPage = PackagePaths.root + "/deploy/man/apphostd.yaml.5.scd"

    /// `*word*` spans of an scdoc source: what it sets in bold, as commands, options and keys
    /// are.
    static func bold(in text: String) -> Set<String> {
        Set(text.split(separator: "*", omittingEmptySubsequences: false).enumerated().compactMap { $0.offset % 2 == 1 ? String($0.element) : nil })
    }

    @Test("apphostd(8) names every command, every option, every signal of --help and every exit status")
    func daemonPageIsComplete() throws {
        let text = try String(contentsOfFile: Self.daemonPage, encoding: .utf8)
        let bold = Self.bold(in: text)
        for subcommand in Invocation.Subcommand.allCases {
            #expect(text.contains("\n*\(subcommand.rawValue)*"), "command \(subcommand.rawValue) has its entry")
            for option in subcommand.options {
                #expect(bold.contains(option.name), "option \(option.name) of \(subcommand.rawValue)")
            }
        }
        for option in ["-h", "--help", "--version", "-c"] {
            #expect(bold.contains(option), "option \(option)")
        }
        let help = Invocation.help(for: nil, identity: .apphostd)
        let signals = help.split(separator: "\n").compactMap { line -> [String]? in
            let words = line.split(separator: " ").map(String.init)
            guard let first = words.first, first.hasPrefix("SIG") else { return nil }
            return [first.trimmingCharacters(in: [","])] + (words.count > 1 && words[1].hasPrefix("SIG") ? [words[1]] : [])
        }.flatMap { $0 }
        #expect(signals.count >= 7, "\(signals)")
        for signal in signals {
            #expect(bold.contains(signal), "signal \(signal)")
        }
        for status in AppHostDaemon.ExitStatus.allCases {
            #expect(text.contains("\n*\(status.rawValue)*\n"), "exit status \(status.rawValue) (\(status))")
        }
    }

    @Test("apphostd.yaml(5) names every key the loader takes and every built-in service's settings")
    func configPageIsComplete() throws {
        let text = try String(contentsOfFile: Self.configPage, encoding: .utf8)
        let bold = Self.bold(in: text)
        let keys = ConfigurationLoader.topLevelKeys + ConfigurationLoader.hostKeys + ConfigurationLoader.metricsKeys
            + ConfigurationLoader.memoryPressureKeys + ConfigurationLoader.serviceKeys + ConfigurationLoader.compositeKeys
            + ConfigurationLoader.restartKeys + ConfigurationLoader.selectKeys
        for key in Set(keys) {
            #expect(bold.contains(key + ":") || bold.contains(key), "key \(key)")
        }
        for entry in BuiltinServices.registry().entriesByName {
            #expect(bold.contains(entry.name), "service \(entry.name)")
            for key in entry.settingKeys ?? [] {
                #expect(bold.contains(key + ":"), "\(entry.name)'s setting \(key)")
            }
        }
    }

    @Test("scdoc renders both pages")
    func scdocRendersThem() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/scdoc") else {
            Issue.record("scdoc is not installed (bash scripts/deps.sh test installs it)")
            return
        }
        for page in [Self.daemonPage, Self.configPage] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/scdoc")
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: page))
            let output = Pipe()
            process.standardOutput = output
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let roff = output.fileHandleForReading.readDataToEndOfFile()
            let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(page): \(complaint)")
            #expect(String(decoding: roff, as: UTF8.self).contains(".TH"), "\(page) became a man page")
        }
    }
}
