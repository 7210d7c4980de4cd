import AppHost
import AppHostTestSupport
import Synchronization
import Testing

@Suite struct ReloadTests {
    /// A descriptor whose factory records `name:made` each time it builds an instance; the
    /// instance built as the n-th one of any name records its events as `name#n`.
    func entry(_ name: String, _ journal: Journal, settings: [String: SettingValue] = [:], answer: ConfigurationUpdate = .restartRequired, counter: Counter? = nil) -> ServiceDescriptor {
        ServiceDescriptor(name: name, configuration: ServiceSection(settings)) {
            journal.record("\(name):made")
            let label = counter.map { counter in "\(name)#\(counter.next())" } ?? name
            return Recorder(name: label, journal: journal, configurationAnswer: answer)
        }
    }

    @Test func addRemoveAndLiveUpdate() async throws {
        let journal = Journal()
        let counter = Counter()
        let host = try PluggableApplicationHost(
            services: [entry("a", journal), entry("b", journal, answer: .applied, counter: counter), entry("gone", journal)],
            logger: quietLogger
        )
        try await host.withRunning {
            try await host.launched()
            #expect(journal.services(for: "didBecomeActive") == ["a", "b#1", "gone"])
            _ = journal.drain()

            let report = try await host.reload([
                entry("a", journal),
                entry("b", journal, settings: ["level": .string("debug")], answer: .applied, counter: counter),
                entry("new", journal),
            ])
            #expect(report.added == ["new"])
            #expect(report.removed == ["gone"])
            #expect(report.updated == ["b"])
            #expect(report.restarted.isEmpty)
            let applied = journal.drain()
            #expect(applied.filter { $0.hasSuffix(":made") } == ["b:made", "new:made"], "instances are built before anything changes")
            #expect(applied.filter { !$0.hasSuffix(":made") } == [
                "gone:willTerminate",
                "b#1:didUpdateConfiguration",
                "new:willFinishLaunching", "new:didFinishLaunching", "new:didBecomeActive",
            ])
            #expect(host.serviceNames == ["a", "b", "new"])

            try await host.enterBackground()
            #expect(journal.services(for: "didEnterBackground") == ["new", "b#1", "a"], "b kept its first instance")
            #expect(!journal.entries.contains("gone:didEnterBackground"))
            await host.terminate()
            #expect(journal.services(for: "willTerminate") == ["gone", "new", "b#1", "a"])
        }
    }

    @Test func changedServiceRestartsByDefault() async throws {
        let journal = Journal()
        let counter = Counter()
        let host = try PluggableApplicationHost(services: [entry("a", journal), entry("b", journal, counter: counter)], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()
            let report = try await host.reload([entry("a", journal), entry("b", journal, settings: ["x": .int(1)], counter: counter)])
            #expect(report.restarted == ["b"])
            #expect(report.updated.isEmpty)
            #expect(journal.drain() == [
                "b:made", "b#1:didUpdateConfiguration", "b#1:willTerminate",
                "b#2:willFinishLaunching", "b#2:didFinishLaunching", "b#2:didBecomeActive",
            ])
            try await host.enterBackground()
            #expect(journal.drain() == ["b#2:willResignActive", "a:willResignActive", "b#2:didEnterBackground", "a:didEnterBackground"])
        }
    }

    @Test func addedServiceCatchesUpWithBackgroundAndLock() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(services: [entry("a", journal)], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            try await host.setSessionLocked(true)
            _ = journal.drain()
            try await host.reload([entry("a", journal), entry("late", journal)])
            #expect(journal.drain() == ["late:made", "late:willFinishLaunching", "late:didFinishLaunching", "late:didEnterBackground", "late:protectedDataWillBecomeUnavailable"])
            try await host.enterForeground()
            #expect(journal.services(for: "willEnterForeground") == ["a", "late"])
        }
    }

    @Test func failingFactoryChangesNothing() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(services: [entry("a", journal), entry("b", journal)], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()
            let statusBefore = host.status
            let broken = ServiceDescriptor(name: "c", configuration: ServiceSection(keyPath: "services[2].settings", file: "/etc/x.yaml")) {
                throw TestError(description: "cannot open /nowhere")
            }
            let error = await #expect(throws: InvalidConfiguration.self) {
                try await host.reload([self.entry("a", journal), broken])
            }?.first
            #expect(error?.message.contains("cannot open /nowhere") == true)
            #expect(error?.keyPath == "services[1]")
            #expect(journal.drain().isEmpty, "nothing was terminated or launched")
            #expect(host.serviceNames == ["a", "b"])
            #expect(host.status.services == statusBefore.services)
            #expect(host.status.note?.hasPrefix("reload failed: ") == true, "the status says why")

            await #expect(throws: InvalidConfiguration.self) {
                try await host.reload([self.entry("a", journal), self.entry("a", journal)])
            }
        }
    }

    @Test("a reload after terminate is refused and changes nothing")
    func reloadAfterTerminateIsRefused() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(services: [entry("a", journal)], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
        }
        await #expect(throws: InvalidConfiguration.self) { try await host.reload([entry("b", journal)]) }
        #expect(host.serviceNames == ["a"])
    }

    @Test func everyServiceThatCannotBeBuiltIsReportedAndNothingChanges() async throws {
        let journal = Journal()
        let host = try makeHost(["a"], journal: journal)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()
            func broken(_ name: String) -> ServiceDescriptor {
                ServiceDescriptor(name: name) { throw TestError(description: "\(name) cannot start") }
            }
            let errors = await #expect(throws: InvalidConfiguration.self) {
                try await host.reload([self.entry("a", journal), broken("b"), broken("c")])
            }
            #expect(errors?.errors.map(\.message) == ["b: b cannot start", "c: c cannot start"])
            #expect(host.status.note?.hasSuffix("(and 1 more problem)") == true, "\(host.status)")
            let duplicates = await #expect(throws: InvalidConfiguration.self) {
                try await host.reload([self.entry("a", journal), self.entry("a", journal), self.entry("a", journal)])
            }
            #expect(duplicates?.errors.map(\.keyPath) == ["services[1].name", "services[2].name"])
            #expect(journal.drain().isEmpty, "nothing was terminated or launched")
        }
    }
}
