import Testing

/// SystemdIntegration's order, the one place the edge's rules live, read from a probe process:
/// building it blocks and reads the lifecycle signals, which the test runner's must not.
@Suite struct SystemdIntegrationTests {
    @Test("every part: the reporter first, the writers before the host, the host's end shuts the group down, the bus, logind, time changes, the network and power after the launch and on their own, yours last")
    func everyPartInItsPlace() throws {
        let lines = try SystemdProbe.lines(["composition", "metrics", "restorable", "other"])
        #expect(lines == [
            "reporter cancelGroup cancelGroup",
            "metrics cancelGroup cancelGroup",
            "restorable-state cancelGroup cancelGroup",
            "host gracefullyShutdownGroup gracefullyShutdownGroup",
            "signals cancelGroup cancelGroup",
            "watchdog cancelGroup cancelGroup",
            "memory-pressure cancelGroup cancelGroup",
            "log-control ignore cancelGroup",
            "logind ignore cancelGroup",
            "time-changes ignore cancelGroup",
            "network ignore cancelGroup",
            "power ignore cancelGroup",
            "other cancelGroup cancelGroup",
        ])
    }

    @Test("the parts an option turns off are left out, and the order of the others holds")
    func partsOff() throws {
        let lines = try SystemdProbe.lines(["composition", "no-bus", "no-logind", "no-memory-pressure", "no-time-changes", "no-network", "no-power"])
        #expect(lines.map { String($0.split(separator: " ")[0]) } == ["reporter", "host", "signals", "watchdog"])
    }
}
