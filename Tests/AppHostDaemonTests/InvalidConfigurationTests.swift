import AppHost
import AppHostServices
import AppHostSystemd
import Logging
import Testing
@testable import AppHostDaemon

@Suite("Every problem of a file at once")
struct InvalidConfigurationTests {
    static let manyProblems = """
        host:
          hook-deadlin: 5s
          launch-deadline: 5 seconds
        services:
          - logger
          - name: checked
            settings:
              level: loud
          - type: nosuch
          - logger
        """

    @Test func everyProblemComesOutInFileOrderWithItsLineAndKey() {
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: Self.manyProblems, file: "many.yaml", registry: makeTestRegistry(), environment: [:])
        }
        #expect(errors?.errors.map { "\($0.line.map(String.init) ?? "-") \($0.keyPath)" } == [
            "2 host.hook-deadlin", "3 host.launch-deadline", "8 services[1].settings.level",
            "9 services[2].type", "10 services[3]",
        ])
        #expect(errors?.errors.allSatisfy { $0.file == "many.yaml" } == true)
        #expect(errors?.first.hint?.hasPrefix("did you mean hook-deadline?") == true)
        #expect(errors?.summary.hasSuffix("(and 4 more problems)") == true)
        #expect(errors?.description.split(separator: "\n").count == 5)
    }

    @Test("every unknown key of a built-in service's settings is reported, not only the first")
    func everyUnknownSettingOfABuiltinServiceIsReported() {
        let text = """
        services:
          - type: logger
            settings:
              levle: debug
              colour: true
              level: info
          - type: analytics
            settings:
              flush-intervl: 5s
              compact-after: 100
              retention: 7d
        """
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: text, file: "keys.yaml", registry: BuiltinServices.registry(), environment: [:])
        }
        #expect(errors?.errors.map { "\($0.line.map(String.init) ?? "-") \($0.keyPath)" } == [
            "4 services[0].settings.levle", "5 services[0].settings.colour",
            "9 services[1].settings.flush-intervl", "11 services[1].settings.retention",
        ])
        #expect(errors?.errors.first?.hint == "did you mean level? valid keys: events, level")
        #expect(errors?.errors[2].hint == "did you mean flush-interval? valid keys: compact-after, flush-interval, low-power-flush-interval")
    }

    @Test func aMisspeltServicesKeyIsOneProblemNotTwo() {
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: "servics:\n  - logger\n", file: "typo.yaml", registry: makeTestRegistry(), environment: [:])
        }
        #expect(errors?.errors.map(\.keyPath) == ["servics"])
    }

    /// Every problem of `text`, as `line keyPath`.
    static func problems(_ text: String) -> [String] {
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: text, file: "f.yaml", registry: makeTestRegistry(), environment: [:])
        }
        return errors?.errors.map { "\($0.line.map(String.init) ?? "-") \($0.keyPath)" } ?? []
    }

    @Test(arguments: [
        ("services:\n  - name: a\n    type: [checked]\n", ["3 services[0].type"]),
        ("services:\n  - name: c\n    type: checked\n    settings: loud\n", ["4 services[0].settings"]),
        ("services:\n  - name: \"bad name\"\n", ["2 services[0].name"]),
        ("services:\n  - \"-x\"\n", ["2 services[0]"]),
        ("host:\n  memory-pressure:\n    window: 20s\n    warning-stall: 5s\nservices:\n  - logger\n", ["3 host.memory-pressure.window"]),
    ])
    func aProblemBringsNoFollowOnProblems(text: String, expected: [String]) {
        #expect(Self.problems(text) == expected)
    }

    @Test func aMissingServicesListIsReportedBesideAnUnrelatedUnknownKey() {
        #expect(Self.problems("hots:\n  log-level: info\n") == ["1 hots", "1 services"])
    }

    @Test func aDuplicateOfAnEntryWithAnotherProblemIsStillADuplicate() {
        let text = "services:\n  - name: c\n    type: checked\n    settings:\n      level: loud\n  - name: c\n    type: checked\n"
        #expect(Self.problems(text) == ["5 services[0].settings.level", "6 services[1]"])
    }

    @Test func aFileWithThousandsOfProblemsKeepsTheFirstHundredAndCountsTheRest() {
        let text = "services:\n" + (0..<3_000).map { "  - nosuch\($0)\n" }.joined()
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: text, file: "big.yaml", registry: makeTestRegistry(), environment: [:])
        }
        #expect(errors?.errors.count == 100)
        #expect(errors?.omitted == 2_900)
        #expect(errors?.errors.last?.line == 101)
        #expect(errors?.summary.hasSuffix("(and 2999 more problems)") == true)
        #expect(errors?.description.hasSuffix("… and 2900 more problems not shown") == true)
    }

    @Test func aFileThatIsNotYAMLStopsAtItsFirstProblem() {
        let errors = configurationErrors { () throws(InvalidConfiguration) in
            try DaemonConfiguration(text: "services: [logger\nhost: {\n", file: "broken.yaml", registry: makeTestRegistry(), environment: [:])
        }
        #expect(errors?.errors.count == 1)
    }

    @Test func aGoodFileGivesTheHostItsSettingsAndDescriptors() throws {
        let text = "host:\n  hook-deadline: 250ms\n  state-directory: /srv/x\nservices:\n  - logger\n  - name: c\n    type: checked\n"
        let configuration = try DaemonConfiguration(text: text, registry: makeTestRegistry(), environment: [:])
        let host = configuration.hostConfiguration
        #expect(host.hookDeadline == .milliseconds(250))
        #expect(host.stateDirectory == "/srv/x")
        #expect((host.launchState as? LaunchStateFiles)?.directory == "/srv/x")
        #expect(configuration.serviceDescriptors(registry: makeTestRegistry()).map(\.name) == ["logger", "c"])
    }
}
