import ArgumentParser
import Testing

@testable import AppHostDaemon

@Suite("The command line")
struct ApphostdCommandTests {
    @Test(
        "the run fast path reads --config exactly as the parser does",
        arguments: [
            [], ["run"],
            ["--config", "a.yaml"], ["-c", "a.yaml"], ["--config=a.yaml"],
            ["run", "--config", "/etc/x.yaml"], ["run", "-c", "x.yaml"], ["run", "--config=x.yaml"],
            ["--config", "run"],
        ]
    )
    func fastPathAgreesWithParser(arguments: [String]) throws {
        let fast = try #require(ApphostdCommand.runConfigOption(arguments), "\(arguments) should take the fast path")
        let parsed = try ApphostdCommand.parseAsRoot(arguments)
        let run = try #require(parsed as? RunCommand, "the parser reads \(arguments) as \(type(of: parsed))")
        #expect(run.config == fast)
    }

    @Test(
        "everything else goes through the parser",
        arguments: [
            ["check"], ["check", "--config", "a.yaml"], ["services"], ["analytics", "--json"],
            ["--help"], ["-h"], ["--version"], ["run", "--help"],
            ["--config"], ["run", "--config"], ["--config="], ["-c", ""], ["--config", "-x"],
            ["--config", "a", "--config", "b"], ["run", "run"], ["--cnfig", "a.yaml"], ["-c=a.yaml"], ["a.yaml"],
        ]
    )
    func otherShapesAreLeftToTheParser(arguments: [String]) {
        #expect(ApphostdCommand.runConfigOption(arguments) == nil)
    }
}
