@testable import AppHost
import AppHostTestKit
import Testing

/// Composites: first-of, one-of and group, written with the test kit. Each child is a service
/// of the host with its own place in the fan-out, named by its path.
@Suite struct CompositeTests {
    static let deadlines = PluggableApplicationHost.Configuration(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5))

    /// A recorder named `name`; what it records goes to the test kit's log under its path.
    static func service(_ name: String, required: Bool = true, willFinish: Recorder.LaunchAnswer = .accept, didFinish: Recorder.LaunchAnswer = .accept, hangs: [String: Latch] = [:], deadline: Duration? = nil) -> ServiceDescriptor {
        ServiceDescriptor(name: name, isRequired: required, deadline: deadline, service: Recorder(name: name, journal: Journal(), willFinish: willFinish, didFinish: didFinish, hangs: hangs))
    }

    static func composite(_ name: String, _ kind: ServiceComposite.Kind, required: Bool = true, _ children: [ServiceDescriptor]) -> ServiceDescriptor {
        ServiceDescriptor(name: name, isRequired: required, composite: ServiceComposite(kind, children: children))
    }

    @Test("first-of: the first child that launches is the composite; the one that refused before it and those after it are not the host's services")
    func firstOfTakesTheFirstThatLaunches() async throws {
        let services = [
            Self.service("a"),
            Self.composite("notify", .firstOf, [Self.service("desktop", willFinish: .refuse), Self.service("journal"), Self.service("console")]),
            Self.service("b"),
        ]
        try await withTestHost(services, configuration: Self.deadlines) { host in
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            let launch = try #require(records.all.first { $0.event == .didFinishLaunching })
            #expect(launch.failures.isEmpty && launch.serviceCount == 3, "passing over a child is no failure: \(launch)")
            #expect(host.services(receiving: .willFinishLaunching) == ["a", "notify/desktop", "notify/journal", "b"])
            #expect(host.services(receiving: .didFinishLaunching) == ["a", "notify/journal", "b"])
            #expect(host.status.services.map(\.name) == ["a", "notify/journal", "b"])
            #expect(host.status.description.hasPrefix("active · 3 services · notify → journal"), "\(host.status)")
            #expect(host.logs.messages.contains { $0.hasPrefix("notify: first-of chose notify/journal after notify/desktop failed applicationWillFinishLaunching: returned false") }, "\(host.logs.messages)")
            try await host.enterBackground()
            #expect(host.services(receiving: .didEnterBackground) == ["b", "notify/journal", "a"])
            #expect(host.events(of: "notify/console").isEmpty && host.events(of: "notify/desktop") == [.willFinishLaunching])
        }
    }

    @Test("first-of where no child launches fails as one service: required, the launch fails with the last child's failure; optional, it is disabled and the launch goes on")
    func firstOfWithNoChildThatLaunches() async throws {
        let children = [Self.service("desktop", willFinish: .refuse), Self.service("journal", didFinish: .fail)]
        try await withTestHost([Self.service("a"), Self.composite("notify", .firstOf, children)], configuration: Self.deadlines) { host in
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "notify/journal")
            #expect(host.services(receiving: .willTerminate) == ["a"])
        }
        try await withTestHost([Self.service("a"), Self.composite("notify", .firstOf, required: false, children), Self.service("b")], configuration: Self.deadlines) { host in
            try await host.launched()
            #expect(host.status.services.filter(\.isEnabled).map(\.name) == ["a", "b"])
            #expect(host.status.services.map(\.name) == ["a", "notify/desktop", "notify/journal", "b"], "both children shown, disabled with why")
            #expect(host.logs.messages.contains { $0.hasPrefix("notify: first-of found no child that launches") })
        }
    }

    @Test("one-of: only the chosen child is built and launched, and the launch says which and why")
    func oneOfLaunchesTheChosenChild() async throws {
        let services = [Self.composite("backup", .oneOf(chosen: "remote", reason: "BACKUP_MODE=remote"), [Self.service("local"), Self.service("remote")])]
        try await withTestHost(services, configuration: Self.deadlines) { host in
            try await host.launched()
            #expect(host.services(receiving: .didFinishLaunching) == ["backup/remote"])
            #expect(host.status.services.map(\.name) == ["backup/remote"])
            #expect(host.status.choices == ["backup → remote"])
            #expect(host.logs.messages.contains("backup: one-of chose backup/remote (BACKUP_MODE=remote)"), "\(host.logs.messages)")
        }
    }

    @Test("group: an optional child that fails is disabled and the group launches; a required one rolls back what the group launched, in reverse, and the group fails as one service")
    func groupLaunchesAsAFlowAndRollsBackTogether() async throws {
        let optionalFails = [Self.service("a"), Self.composite("sync", .group, [Self.service("x"), Self.service("y", required: false, didFinish: .fail), Self.service("z")]), Self.service("b")]
        try await withTestHost(optionalFails, configuration: Self.deadlines) { host in
            try await host.launched()
            #expect(host.status.services.filter(\.isEnabled).map(\.name) == ["a", "sync/x", "sync/z", "b"])
        }
        let requiredFails = [Self.service("a"), Self.composite("sync", .group, required: false, [Self.service("x"), Self.service("y"), Self.service("z", willFinish: .refuse), Self.service("w")]), Self.service("b")]
        try await withTestHost(requiredFails, configuration: Self.deadlines) { host in
            try await host.launched()
            #expect(host.services(receiving: .willTerminate) == ["sync/y", "sync/x"], "the group's rollback, in reverse")
            #expect(host.events(of: "sync/w").isEmpty)
            #expect(host.status.services.filter(\.isEnabled).map(\.name) == ["a", "b"])
            #expect(host.services(receiving: .didBecomeActive) == ["a", "b"])
        }
        let requiredGroup = [Self.service("a"), Self.composite("sync", .group, [Self.service("x"), Self.service("y", willFinish: .refuse)]), Self.service("b")]
        try await withTestHost(requiredGroup, configuration: Self.deadlines) { host in
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "sync/y")
            #expect(host.services(receiving: .willTerminate) == ["sync/x", "a"])
        }
    }

    @Test("composites nest: events go up in order and down in reverse through every level")
    func nestedEventsKeepTheirPlace() async throws {
        let services = [
            Self.service("a"),
            Self.composite("outer", .group, [Self.service("x"), Self.composite("inner", .firstOf, [Self.service("p", willFinish: .refuse), Self.service("q")]), Self.service("y")]),
            Self.service("b"),
        ]
        try await withTestHost(services, configuration: Self.deadlines) { host in
            try await host.launched()
            #expect(host.services(receiving: .didBecomeActive) == ["a", "outer/x", "outer/inner/q", "outer/y", "b"])
            #expect(host.status.choices == ["outer/inner → q"])
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(host.services(receiving: .willEnterForeground) == ["a", "outer/x", "outer/inner/q", "outer/y", "b"])
            #expect(host.services(receiving: .didEnterBackground) == ["b", "outer/y", "outer/inner/q", "outer/x", "a"])
        }
    }

    @Test("a hung child stalls only itself: its siblings and the rest get the event, and the overrun names it by its path")
    func aHungChildStallsOnlyItself() async throws {
        let latch = Latch()
        let services = [Self.service("a"), Self.composite("sync", .group, [Self.service("x", hangs: ["didEnterBackground": latch], deadline: .milliseconds(100)), Self.service("y")]), Self.service("b")]
        try await withTestHost(services, configuration: Self.deadlines) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(host.services(receiving: .didEnterBackground) == ["b", "sync/y", "sync/x", "a"])
            #expect(host.status.lastOverrun?.service == "sync/x", "\(host.status)")
            latch.open()
        }
    }

    @Test("a reload diffs inside composites by path: a group's child added, removed and restarted; a first-of keeps the child it chose; a one-of that chooses another child swaps them")
    func reloadDiffsInsideComposites() async throws {
        func services(group: [ServiceDescriptor], mode: String) -> [ServiceDescriptor] {
            [
                Self.service("a"),
                Self.composite("sync", .group, group),
                Self.composite("notify", .firstOf, [Self.service("desktop", willFinish: .refuse), Self.service("journal")]),
                Self.composite("backup", .oneOf(chosen: mode, reason: "test"), [Self.service("local"), Self.service("remote")]),
            ]
        }
        let before = services(group: [Self.service("x"), Self.service("y")], mode: "local")
        try await withTestHost(before, configuration: Self.deadlines) { host in
            try await host.launched()
            var changedY = Self.service("y")
            changedY.configuration = ServiceSection(["k": .int(1)])
            let report = try await host.reload(services(group: [changedY, Self.service("z")], mode: "remote"))
            #expect(report.added == ["sync/z", "backup/remote"])
            #expect(report.removed == ["backup/local", "sync/x"])
            #expect(report.restarted == ["sync/y"])
            #expect(host.status.services.map(\.name) == ["a", "sync/y", "sync/z", "notify/journal", "backup/remote"])
            #expect(host.events(of: "notify/desktop") == [.willFinishLaunching], "a reload does not try the first-of again")
            #expect(host.status.choices == ["notify → journal", "backup → remote"])
        }
    }

    @Test("a first-of a reload adds launches as at launch: the first child that launches, in the first-of's place, and STATUS= says which")
    func aFirstOfAddedByAReloadChoosesAsALaunchDoes() async throws {
        try await withTestHost([Self.service("a"), Self.service("b")], configuration: Self.deadlines) { host in
            try await host.launched()
            let report = try await host.reload([
                Self.service("a"),
                Self.composite("notify", .firstOf, [Self.service("desktop", didFinish: .refuse), Self.service("journal"), Self.service("console")]),
                Self.service("b"),
            ])
            #expect(report.added == ["notify/journal"])
            #expect(host.status.services.map(\.name) == ["a", "notify/journal", "b"])
            #expect(host.status.choices == ["notify → journal"])
            #expect(host.events(of: "notify/desktop") == [.willFinishLaunching, .didFinishLaunching], "refused, and no willTerminate: it never launched")
            #expect(host.events(of: "notify/journal") == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
            #expect(host.events(of: "notify/console").isEmpty)
            try await host.enterBackground()
            #expect(host.services(receiving: .didEnterBackground) == ["b", "notify/journal", "a"])
        }
    }

    @Test("a bad composite is refused with every problem at once: empty, a one-of's choice that is no child, a duplicate child, nesting too deep, a / in a child's name")
    func badCompositesAreRefused() throws {
        var deep = Self.service("leaf")
        for level in 1...5 { deep = Self.composite("level\(level)", .group, [deep]) }
        let services = [
            Self.composite("empty", .group, []),
            Self.composite("backup", .oneOf(chosen: "cloud", reason: "default"), [Self.service("local")]),
            Self.composite("notify", .firstOf, [Self.service("desktop"), Self.service("desktop")]),
            deep,
            Self.composite("odd", .group, [Self.service("a/b")]),
        ]
        let errors = #expect(throws: InvalidConfiguration.self) { try PluggableApplicationHost(services: services, logger: quietLogger) }
        let text = errors.map { "\($0)" } ?? ""
        #expect(text.contains("empty: a group with no children"), "\(text)")
        #expect(text.contains("backup: one-of chose \"cloud\", which is none of its children"), "\(text)")
        #expect(text.contains("duplicate service name \"notify/desktop\""), "\(text)")
        #expect(text.contains("composites nest 5 deep"), "\(text)")
        #expect(text.contains("\"a/b\": a name may not contain /"), "\(text)")
    }
}
