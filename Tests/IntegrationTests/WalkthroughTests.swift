import Foundation
import Testing

extension IntegrationSuites {
    /// README.md's "Five minutes with systemctl", as a newcomer runs it: the block's commands, in
    /// order, in the shell `scripts/try.sh` opens. Every command must succeed, and every `→` in a
    /// comment is what the command prints (`…` stands for anything; runs of spaces count as one).
    @Suite(.enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)"))
    struct WalkthroughTests {
        /// One line of the block: the command, and what it prints when the comment says.
        struct Step {
            let command: String
            /// The `→` text cut at each `…`, spaces collapsed; empty when the comment promises no output.
            let pieces: [String]
        }

        static func collapsed(_ text: String) -> String {
            text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).joined(separator: " ")
        }

        /// The steps of the README's `sh` block in `section` that holds `marker`.
        static func steps(section: String = "## Five minutes with systemctl", marker: String = "systemctl --user start apphostd") throws -> [Step] {
            let readme = try IntegrationSuites.GettingStartedPackageTests.read(IntegrationSuites.GettingStartedPackageTests.repository + "/README.md")
            let blocks = try IntegrationSuites.GettingStartedPackageTests.blocks("sh", in: readme, section: section)
            let block = try #require(blocks.first { $0.contains(marker) })
            return block.split(separator: "\n").compactMap { line -> Step? in
                let parts = line.split(separator: "#", maxSplits: 1)
                let command = parts.isEmpty || line.hasPrefix("#") ? "" : parts[0].trimmingCharacters(in: .whitespaces)
                guard !command.isEmpty, command != "exit" else { return nil }
                let comment = parts.count > 1 ? String(parts[1]) : ""
                guard let arrow = comment.range(of: "→") else { return Step(command: command, pieces: []) }
                let expected = comment[arrow.upperBound...]
                return Step(command: command, pieces: expected.components(separatedBy: "…").map { collapsed($0) }.filter { !$0.isEmpty })
            }
        }

        /// `text` in single quotes for bash.
        static func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }

        /// The script try.sh runs: each step once, or, where it promises output, again until it
        /// prints it (a signal takes effect after `systemctl kill` returns; a person reads
        /// slower), for at most 15 s; each step's status and output after a marker line.
        static func script(_ steps: [Step]) -> String {
            var script = "export LANG=C.UTF-8\n"
            for (index, step) in steps.enumerated() {
                let check = step.pieces.map { "grep -qF -- \(quoted($0)) <<<\"$flat\"" }.joined(separator: " && ")
                script += """
                    for attempt in $(seq 75); do
                      out=$(\(step.command) 2>&1); rc=$?
                      flat=$(tr -s ' \\t\\n' '   ' <<<"$out")
                      if [ $rc = 0 ] \(check.isEmpty ? "" : "&& \(check)"); then break; fi
                      \(step.pieces.isEmpty ? "break" : "sleep 0.2")
                    done
                    printf '@@@ step %d status %d\\n%s\\n' \(index) "$rc" "$out"

                    """
            }
            return script
        }

        @Test("every command of the walkthrough succeeds and prints what its → says")
        func theWalkthroughIsTrue() async throws {
            let steps = try Self.steps()
            #expect(steps.count >= 15 && steps.filter { !$0.pieces.isEmpty }.count >= 7, "\(steps.count) steps")
            let repository = IntegrationSuites.GettingStartedPackageTests.repository
            let tryDirectories = { try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("apphostd-try.") } }
            let before = try tryDirectories()
            // The toolchain's PATH: try.sh builds apphostd when its sources changed.
            let environment = ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
            let run = try await ProcessRunner.run(["bash", repository + "/scripts/try.sh", Self.script(steps)], environment: environment, timeout: .seconds(600))
            #expect(run.succeeded, "\(run)")
            // The outputs, by step.
            var outputs: [Int: (status: Int, text: String)] = [:]
            for chunk in run.stdout.components(separatedBy: "@@@ step ").dropFirst() {
                let header = chunk.prefix { $0 != "\n" }.split(separator: " ")
                guard header.count == 3, let index = Int(header[0]), let status = Int(header[2]) else { continue }
                outputs[index] = (status, String(chunk.drop { $0 != "\n" }))
            }
            for (index, step) in steps.enumerated() {
                let output = try #require(outputs[index], "no output of `\(step.command)`:\n\(run)")
                #expect(output.status == 0, "`\(step.command)` exited \(output.status):\n\(output.text)")
                // In order, each piece after the one before.
                var rest = Substring(Self.collapsed(output.text))
                for piece in step.pieces {
                    guard let found = rest.range(of: piece) else {
                        Issue.record("`\(step.command)` did not print \"\(piece)\" (after the pieces before it):\n\(output.text)")
                        break
                    }
                    rest = rest[found.upperBound...]
                }
            }
            // try.sh leaves nothing behind in /tmp.
            let left = Set(try tryDirectories()).subtracting(before)
            #expect(left.isEmpty, "left behind: \(left)")
        }

        @Test("the Configuration section's check of the shipped config prints what its → says", .enabled(if: IntegrationEnvironment.apphostdBinary != nil, "needs the apphostd binary"))
        func theConfigCheckIsTrue() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let step = try #require(try Self.steps(section: "## Configuration", marker: "apphostd check --config config/apphostd.yaml").first)
            #expect(step.command == "apphostd check --config config/apphostd.yaml" && !step.pieces.isEmpty)
            // From the repository, as the README's relative path says.
            let run = try await ProcessRunner.run(["/bin/sh", "-c", "cd \"$1\" && exec \"$2\" check --config config/apphostd.yaml", "sh", IntegrationSuites.GettingStartedPackageTests.repository, binary])
            #expect(run.succeeded, "\(run)")
            #expect(step.pieces.allSatisfy { Self.collapsed(run.stdout).contains($0) }, "\(step.pieces) in \(run)")
        }
    }
}
