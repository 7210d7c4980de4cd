import AppHostTestSupport
import Foundation
import Testing

// The broken configs: the corpus in Tests/AppHostDaemonTests/BadConfigs, with the daemon's own
// wording where it differs, and the kinds made at test time.
extension IntegrationSuites.DaemonBadConfigTests {
    /// One broken config and the text its error must contain.
    struct Case: Sendable, CustomTestStringConvertible {
        enum Content: Sendable {
            /// A copy of a corpus file.
            case corpus(path: String)
            /// A file with this text.
            case text(String)
            /// A file over the 1 MiB limit.
            case huge
            /// Two symbolic links pointing at each other.
            case symlinkLoop
            /// A readable config made mode 000. Root reads it anyway unless it lacks
            /// CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so the daemon runs without them.
            case unreadable
            /// Nothing at the path.
            case missing
            /// A directory at the path.
            case directory
            /// A FIFO at the path (the loader must not block on it).
            case fifo
        }

        let name: String
        let content: Content
        /// What the message must contain (besides the path).
        let expected: String

        var testDescription: String { name }

        /// Replaces whatever is at `path` (file, link, directory, FIFO) with this case.
        func install(at path: String) throws {
            Self.remove(path)
            switch content {
            case .corpus(let source):
                try FileManager.default.copyItem(atPath: source, toPath: path)
            case .text(let text):
                try text.write(toFile: path, atomically: false, encoding: .utf8)
            case .huge:
                // Valid YAML, just far too long for a config file.
                let line = "# " + String(repeating: "x", count: 97) + "\n"
                try ("services:\n  - logger\n" + String(repeating: line, count: 11_000)).write(toFile: path, atomically: false, encoding: .utf8)
            case .symlinkLoop:
                Self.remove(path + ".other")
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".other")
                try FileManager.default.createSymbolicLink(atPath: path + ".other", withDestinationPath: path)
            case .unreadable:
                try "services:\n  - logger\n".write(toFile: path, atomically: false, encoding: .utf8)
                guard chmod(path, 0o000) == 0 else { throw HarnessError("chmod 000 \(path): errno \(errno)") }
            case .missing:
                break
            case .directory:
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .fifo:
                guard mkfifo(path, 0o644) == 0 else { throw HarnessError("mkfifo \(path): errno \(errno)") }
            }
        }

        /// Removes a file, link, FIFO or directory at `path`, if any.
        static func remove(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            if info.st_mode & S_IFMT == S_IFDIR {
                try? FileManager.default.removeItem(atPath: path)
            } else {
                unlink(path)
            }
        }
    }

    /// `Tests/AppHostDaemonTests/BadConfigs`, found from this file.
    static let corpusDirectory: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AppHostDaemonTests/BadConfigs").path

    /// Where the real daemon's message differs from the corpus manifest's: the manifest is
    /// checked with a test registry (`BadConfigCorpusTests`) that has a `checked` service and
    /// built-ins without settings; the daemon has the real services. These still name the
    /// problem, in the real registry's words.
    static let daemonWording: [String: String] = [
        "settings-invalid-choice.yaml": "services[0].name: unknown service \"checked\" (without type:, the name is the service type",
        "settings-unknown-key-near-miss.yaml": "services[0].type: unknown service \"checked\"",
        "settings-wrong-type.yaml": "services[0].name: unknown service \"checked\" (without type:, the name is the service type",
        "settings-unknown-key.yaml": "services[0].settings.colour: unknown key",
        "unknown-service-type.yaml": "services[1].type: unknown service \"analytix\" (did you mean \"analytics\"?",
    ]

    /// The corpus files with the text each error must contain (from `expected.txt`).
    static let corpus: [Case] = {
        let manifest = (try? String(contentsOfFile: corpusDirectory + "/expected.txt", encoding: .utf8)) ?? ""
        return manifest.split(separator: "\n").compactMap { row -> Case? in
            if row.hasPrefix("#") { return nil }
            let fields = row.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            let file = String(fields[0])
            return Case(name: file, content: .corpus(path: corpusDirectory + "/" + file), expected: daemonWording[file] ?? String(fields[2]))
        }
    }()

    /// Broken files made at test time: kinds git cannot hold, and settings errors of the real
    /// services (the corpus's settings errors are about a test-only service).
    static let madeHere: [Case] = [
        Case(name: "huge (> 1 MiB)", content: .huge, expected: "the file is too large (1100021 bytes; the limit is 1 MiB)"),
        Case(name: "symlink loop", content: .symlinkLoop, expected: "cannot open the config file: symbolic link loop (ELOOP"),
        Case(name: "unreadable (mode 000)", content: .unreadable, expected: "cannot open the config file: permission denied (EACCES)"),
        Case(name: "missing", content: .missing, expected: "cannot open the config file: no such file (ENOENT)"),
        Case(name: "directory", content: .directory, expected: "is a directory, not a config file"),
        Case(name: "FIFO", content: .fifo, expected: "is not a regular file (a device, FIFO or socket)"),
        Case(name: "probe fault action unknown",
             content: .text("services:\n  - name: p\n    type: probe\n    settings:\n      faults:\n        - { hook: didEnterBackground, action: explode }\n"),
             expected: "services[0].settings.faults[0].action: \"explode\" is not valid (expected one of hang, throw, refuse, block, end)"),
        Case(name: "probe record-to relative",
             content: .text("services:\n  - name: p\n    type: probe\n    settings:\n      record-to: probe.log\n"),
             expected: "services[0].settings.record-to: \"probe.log\" is not an absolute path"),
        Case(name: "probe faults wrong type",
             content: .text("services:\n  - name: p\n    type: probe\n    settings:\n      faults: 5\n"),
             expected: "services[0].settings.faults: expected a list, found an integer"),
        Case(name: "logger settings near miss",
             content: .text("services:\n  - name: logger\n    settings:\n      levle: debug\n"),
             expected: "services[0].settings.levle: unknown key (did you mean level?"),
        Case(name: "exec settings unknown key",
             content: .text("services:\n  - name: e\n    type: exec\n    settings:\n      bogus: 1\n"),
             expected: "services[0].settings.bogus: unknown key (valid keys:"),
    ]

    static let all = corpus + madeHere
}
