import AppHost
import Testing

@Suite struct ServiceConfigurationTests {
    let settings = ServiceSection(
        [
            "name": .string("probe"),
            "count": .int(3),
            "ratio": .double(0.5),
            "enabled": .bool(true),
            "tags": .array([.string("a"), .string("b")]),
            "mixed": .array([.string("a"), .int(2)]),
            "nested": .table(["deep": .int(1)]),
            "faults": .array([.table(["hook": .string("didEnterBackground")])]),
            "short": .string("250ms"),
            "five": .string("5s"),
            "two": .string("2m"),
            "hour": .string("1h"),
            "half": .string("1.5s"),
            "bare": .int(7),
            "far": .string("5 parsecs"),
            "negative": .string("-1s"),
            "level": .string("loud"),
        ],
        keyPath: "services[1].settings",
        file: "/etc/apphostd.yaml",
        lines: ["services[1].settings.count": 12, "services[1].settings": 10]
    )

    @Test("a quoted number or boolean where one is read says to write it without quotes, in a test's dictionary too")
    func quotedValuesNameTheFix() throws {
        let section: ServiceSection = ["count": "1", "enabled": "true", "ratio": "0.5", "word": "many"]
        let count = #expect(throws: ConfigurationError.self) { try section.int("count") }
        #expect(count?.hint == "write it without quotes: 1, not \"1\"; in a test's settings dictionary too: [\"count\": 1]")
        #expect(#expect(throws: ConfigurationError.self) { try section.bool("enabled") }?.hint?.hasPrefix("write it without quotes: true") == true)
        #expect(#expect(throws: ConfigurationError.self) { try section.double("ratio") }?.hint?.hasPrefix("write it without quotes: 0.5") == true)
        // A string that is no number gets no such hint: quotes are not its problem.
        #expect(#expect(throws: ConfigurationError.self) { try section.int("word") }?.hint == nil)
        // What the hint says to write is read.
        #expect(try (["count": 1] as ServiceSection).int("count") == 1)
    }

    @Test func typedAccessorsReadTheirTypes() throws {
        #expect(try settings.string("name") == "probe")
        #expect(try settings.int("count") == 3)
        #expect(try settings.double("ratio") == 0.5)
        #expect(try settings.double("count") == 3)
        #expect(try settings.bool("enabled") == true)
        #expect(try settings.strings("tags") == ["a", "b"])
        #expect(try settings.section("nested")?.int("deep") == 1)
        #expect(try settings.section("nested")?.keyPath == "services[1].settings.nested")
        #expect(try settings.sections("faults")?.first?.string("hook") == "didEnterBackground")
        #expect(try settings.sections("faults")?.first?.keyPath == "services[1].settings.faults[0]")
        #expect(try settings.string("absent") == nil)
        #expect(try settings.duration("absent") == nil)
    }

    @Test func wrongTypesNameTheKeyAndLine() {
        let error = #expect(throws: ConfigurationError.self) { try settings.string("count") }
        #expect(error?.description == "/etc/apphostd.yaml:12: services[1].settings.count: expected a string, found an integer")
        #expect(throws: ConfigurationError.self) { try settings.int("name") }
        #expect(throws: ConfigurationError.self) { try settings.bool("count") }
        #expect(throws: ConfigurationError.self) { try settings.double("name") }
        #expect(throws: ConfigurationError.self) { try settings.section("tags") }
        #expect(throws: ConfigurationError.self) { try settings.sections("nested") }
        let mixed = #expect(throws: ConfigurationError.self) { try settings.strings("mixed") }
        #expect(mixed?.keyPath == "services[1].settings.mixed[1]")
        let range = #expect(throws: ConfigurationError.self) { try settings.int("count", in: 5...10) }
        #expect(range?.hint == "expected 5...10")
        let choice = #expect(throws: ConfigurationError.self) { try settings.choice("level", of: ["quiet", "normal"]) }
        #expect(choice?.hint == "expected one of quiet, normal")
    }

    @Test func unknownKeysAreRefused() throws {
        let section = ServiceSection(["record-to": .string("/tmp/x"), "fualts": .array([])], keyPath: "services[0].settings")
        let error = #expect(throws: ConfigurationError.self) { try section.requireOnlyKeys(["record-to", "faults"]) }
        #expect(error?.keyPath == "services[0].settings.fualts")
        #expect(error?.message == "unknown key")
        #expect(error?.hint == "did you mean faults? valid keys: faults, record-to")
        try section.requireOnlyKeys(["record-to", "fualts"])
    }

    @Test("every unknown key is reported, in file order, a near miss with the key it was meant to be")
    func everyUnknownKeyIsReported() {
        let section = ServiceSection(
            ["levle": .string("debug"), "colour": .bool(true), "events": .array([])],
            keyPath: "services[0].settings", file: "a.yaml",
            lines: ["services[0].settings.levle": 4, "services[0].settings.colour": 3, "services[0].settings.events": 5]
        )
        let errors = section.unknownKeys(["level", "events"])
        #expect(errors.map(\.description) == [
            "a.yaml:3: services[0].settings.colour: unknown key (valid keys: events, level)",
            "a.yaml:4: services[0].settings.levle: unknown key (did you mean level? valid keys: events, level)",
        ])
        #expect(section.unknownKeys(["level", "events", "colour", "levle"]).isEmpty)
    }

    @Test func durations() throws {
        #expect(try settings.duration("short") == .milliseconds(250))
        #expect(try settings.duration("five") == .seconds(5))
        #expect(try settings.duration("two") == .seconds(120))
        #expect(try settings.duration("hour") == .seconds(3600))
        #expect(try settings.duration("half") == .milliseconds(1500))
        #expect(try settings.duration("bare") == .seconds(7))
        let far = #expect(throws: ConfigurationError.self) { try settings.duration("far") }
        #expect(far?.message == "\"5 parsecs\" is not a duration")
        #expect(far?.hint == "write it like 250ms, 5s, 2m or 1h")
        #expect(throws: ConfigurationError.self) { try settings.duration("negative") }
        #expect(throws: ConfigurationError.self) { try settings.duration("enabled") }
    }

    @Test func durationText() {
        #expect(Duration(configText: "100ms") == .milliseconds(100))
        #expect(Duration(configText: " 5s ") == .seconds(5))
        #expect(Duration(configText: "") == nil)
        #expect(Duration(configText: "s") == nil)
        #expect(Duration(configText: "5 parsecs") == nil)
        #expect(Duration.milliseconds(100).configText == "100ms")
        #expect(Duration.seconds(5).configText == "5s")
        #expect(Duration.milliseconds(1500).configText == "1.5s")
        #expect(Duration.milliseconds(1500).microseconds == 1_500_000)
    }

    @Test func errorDescriptionLeavesOutUnknownParts() {
        #expect(ConfigurationError(keyPath: "", message: "empty file").description == "empty file")
        #expect(ConfigurationError(line: 3, keyPath: "host", message: "bad", hint: "fix").description == "line 3: host: bad (fix)")
    }

    @Test("settings written as Swift literals read like the same YAML")
    func literals() throws {
        let settings: ServiceSection = [
            "interval": "1s", "count": 3, "ratio": 0.5, "enabled": true, "levels": ["warning", "critical"],
            "nested": ["key": nil],
        ]
        #expect(settings.values["interval"] == .string("1s"))
        #expect(try settings.duration("interval") == .seconds(1))
        #expect(settings.values["count"] == .int(3))
        #expect(settings.values["ratio"] == .double(0.5))
        #expect(try settings.bool("enabled") == true)
        #expect(settings.values["levels"] == .array([.string("warning"), .string("critical")]))
        #expect(settings.values["nested"] == .table(["key": .null]))
        #expect(settings.keyPath == "settings")
        #expect(ServiceSection() == .empty)
    }
}
