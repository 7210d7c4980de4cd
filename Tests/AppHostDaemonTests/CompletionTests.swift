@testable import AppHostDaemon
import AppHostTestSupport
import Foundation
import Testing

/// The bash completion (deploy/completion/apphostd), run by bash: the commands and each
/// command's options are the parser's, and `restart` offers the running daemon's services.
@Suite struct CompletionTests {
    static let script = PackagePaths.root + "/deploy/completion/apphostd"

    /// COMPREPLY for the command line `words`, the last being the word completed.
    static func complete(_ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let line = "source '\(script)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _apphostd; printf '%s\\n' \"${COMPREPLY[@]}\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["--norc", "-c", line]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map(String.init)
    }

    @Test("the first word: every command the parser knows, and --help and --version")
    func commands() throws {
        let offered = Set(try Self.complete(["apphostd", ""]))
        #expect(offered == Set(Invocation.Subcommand.allCases.map(\.rawValue) + ["help", "--help", "--version"]))
        #expect(try Self.complete(["apphostd", "rec"]) == ["record-exit"])
    }

    @Test("each command's options are the parser's", arguments: Invocation.Subcommand.allCases)
    func options(of subcommand: Invocation.Subcommand) throws {
        let offered = Set(try Self.complete(["apphostd", subcommand.rawValue, "--"]))
        #expect(offered == Set(subcommand.options.map(\.name) + ["--help"]))
    }

    @Test("restart offers the running daemon's services, from status --json on the bus asked")
    func restartOffersTheServices() throws {
        let directory = try makeTemporaryDirectory("apphost-completion")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A stand-in for the daemon's client: the services of a daemon on the bus it was asked.
        let fake = directory + "/apphostd"
        let body = """
            #!/bin/sh
            [ "$1" = status ] && [ "$2" = --json ] || exit 64
            [ "$3" = --user ] && printf '{"services" : [{"name" : "mine"}]}\\n' && exit 0
            printf '{"services":[{"name":"logger","type":"logger"},{"name":"notify/desktop","type":"notification"}],"state":"active"}\\n'
            """
        try body.write(toFile: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake)
        #expect(try Self.complete([fake, "restart", ""]) == ["logger", "notify/desktop"])
        #expect(try Self.complete([fake, "restart", "no"]) == ["notify/desktop"])
        #expect(try Self.complete([fake, "restart", "--user", ""]) == ["mine"])
        #expect(try Self.complete(["/nonexistent/apphostd", "restart", ""]).isEmpty, "no daemon to ask: nothing offered, no error")
    }
}
