import Foundation

/// The counts of `apphostd analytics --json` (every key must be there: a missing one fails decoding).
struct AnalyticsCounts: Decodable, Sendable, CustomStringConvertible {
    struct MemoryWarnings: Decodable, Sendable {
        var warning: Int
        var critical: Int
    }

    var launches: Int
    var firstLaunches: Int
    var cleanPreviousExits: Int
    var uncleanPreviousExits: Int
    var terminations: Int
    var foregroundSeconds: Double
    var backgroundSeconds: Double
    var backgroundEntries: Int
    var foregroundEntries: Int
    var transitions: Int
    var memoryWarnings: MemoryWarnings
    var reloads: Int
    var sessionLocks: Int
    var lastSequence: UInt64

    var description: String {
        "launches \(launches) (first \(firstLaunches), after clean \(cleanPreviousExits), after unclean \(uncleanPreviousExits)), "
            + "terminations \(terminations), background \(backgroundEntries), foreground \(foregroundEntries), transitions \(transitions), "
            + "warnings \(memoryWarnings.warning)/\(memoryWarnings.critical), reloads \(reloads), locks \(sessionLocks), "
            + "seconds fg \(foregroundSeconds) bg \(backgroundSeconds), seq \(lastSequence)"
    }

    /// `apphostd analytics --json --state-directory DIR` (run directly: the state directory is a
    /// plain path also outside the sandbox).
    static func run(stateDirectory: String, binary: String? = IntegrationEnvironment.apphostdBinary) async throws -> CommandResult {
        guard let binary else { throw HarnessError("no apphostd binary") }
        return try await ProcessRunner.run([binary, "analytics", "--json", "--state-directory", stateDirectory], timeout: .seconds(30))
    }

    static func decode(_ json: String) throws -> AnalyticsCounts {
        try JSONDecoder().decode(AnalyticsCounts.self, from: Data(json.utf8))
    }

    /// The report; throws unless the command succeeded and printed a valid report.
    static func read(stateDirectory: String, binary: String? = IntegrationEnvironment.apphostdBinary) async throws -> AnalyticsCounts {
        let result = try await run(stateDirectory: stateDirectory, binary: binary)
        guard result.succeeded else { throw HarnessError("apphostd analytics failed: \(result)") }
        do {
            return try decode(result.stdout)
        } catch {
            throw HarnessError("apphostd analytics --json printed no valid report: \(error)\n\(result.stdout)")
        }
    }
}
