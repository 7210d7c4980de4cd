import Foundation
import Testing

extension IntegrationSuites {
    /// Fault injection through the real daemon (issue 5, "Reliability"): `probe` services that
    /// throw, return false, hang (asynchronously) or block their thread, at each hook, required
    /// and optional. Checks that the daemon reports each fault (StatusText, journal records naming
    /// service and hook), keeps the host's promises (launch rollback in reverse order, an optional
    /// failure disables only that service, no service is skipped, an overrunning service still
    /// gets its later events, in order) and exits with the documented code (1 when a required
    /// service fails to launch, 0 after a stop even when `willTerminate` hangs past its deadline).
    ///
    /// Deadlines are short (hook 300ms, launch 500ms, terminate 1.5s) and faults that take time
    /// last a little longer than their deadline, so the whole suite runs in well under a minute.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonFaultInjectionTests {
        /// Host settings of every scenario here.
        static let host = ["hook-deadline: 300ms", "launch-deadline: 500ms", "terminate-deadline: 1500ms"]

        /// A probe without faults: deadlines of its own, far from anything a loaded machine takes,
        /// so only the faulty probe ever overruns the scenario's short host deadlines.
        static func healthy(_ name: String) -> ProbeSpec {
            ProbeSpec(name, launchDeadline: "10s", deadline: "10s")
        }

        /// `willFinishLaunching` → `applicationWillFinishLaunching` (the name the daemon logs).
        static func hookName(_ event: String) -> String {
            "application" + event.prefix(1).uppercased() + event.dropFirst()
        }

        /// How long a `hang` or `block` fault lasts: past its deadline, but it does return, so
        /// the events queued behind it can be checked.
        static func duration(of action: String) -> String? {
            action == "hang" || action == "block" ? "800ms" : nil
        }

        /// Waits until a record of the unit at `maxPriority` or more urgent mentions every one of
        /// `parts` in its MESSAGE.
        static func waitForRecord(_ daemon: DaemonUnderTest, mentioning parts: [String], maxPriority: Int, whileRunning: Bool = true) async throws {
            try await daemon.waitUntil("a journal record (priority <= \(maxPriority)) mentions \(parts)", timeout: .seconds(10), whileRunning: whileRunning) {
                try await daemon.journal().contains { record in
                    let message = record["MESSAGE"] ?? ""
                    return parts.allSatisfy { message.contains($0) } && (Int(record["PRIORITY"] ?? "") ?? 7) <= maxPriority
                }
            }
        }

        // MARK: Launch, required

        static let launchHooks = ["willFinishLaunching", "didFinishLaunching"]
        static let allActions = ["throw", "refuse", "hang", "block"]

        @Test("a required service that throws, refuses, hangs or blocks in a launch hook fails the unit with exit 1, names itself and rolls back",
              arguments: launchHooks, allActions)
        func requiredLaunchFault(hook: String, action: String) async throws {
            // A hang never returns; a block holds its thread for a while (forever could starve a
            // one-CPU machine's whole cooperative pool, which is not what this checks).
            let fault = ProbeSpec.Fault(hook: hook, action: action, duration: action == "block" ? "2s" : nil)
            let services = [Self.healthy("early"), Self.healthy("middle"), ProbeSpec("req", required: true, faults: [fault]), Self.healthy("late")]
            try await DaemonUnderTest.with(services: services, host: Self.host) { daemon in
                let start = try await daemon.start()
                #expect(!start.succeeded, "start succeeded although the required service failed (\(action) in \(hook)): \(start)")
                let (status, diagnostics) = try await daemon.failedStart()
                daemon.expectExited(with: 1, (status, diagnostics))
                // ERRNO= says how it failed: EIO for an error, ECANCELED for false, ETIMEDOUT for no answer.
                let errno = ["throw": "5", "refuse": "125", "hang": "110", "block": "110"][action]
                #expect(status["StatusErrno"] == errno, "\(diagnostics)")
                let statusText = status["StatusText"] ?? ""
                #expect(statusText.contains("launch failed") && statusText.contains("req") && statusText.contains(Self.hookName(hook)),
                        "StatusText does not name the service and hook: \(diagnostics)")
                try await Self.waitForRecord(daemon, mentioning: ["launch failed", "req", Self.hookName(hook)], maxPriority: 3, whileRunning: false)

                let log = daemon.probeLog
                // Rollback: the services launched before it terminate, last launched first.
                #expect(log.instances(that: "willTerminate").filter { $0 != "req" } == ["middle", "early"], "\(log)")
                for name in ["early", "middle"] {
                    #expect(log.events(of: name) == ["willFinishLaunching", "didFinishLaunching", "willTerminate"], "\(name): \(log)")
                }
                #expect(log.events(of: "late").isEmpty, "a service after the failed required one launched: \(log)")
                let reached = hook == "willFinishLaunching" ? ["willFinishLaunching"] : ["willFinishLaunching", "didFinishLaunching"]
                #expect(Array(log.events(of: "req").prefix(reached.count)) == reached, "\(log)")
                #expect(!log.contains("req", "didBecomeActive"), "\(log)")
            }
        }

        // MARK: Launch, optional

        @Test("optional services failing launch in every way are disabled one by one; the rest launch and get every later event")
        func optionalLaunchFaults() async throws {
            var services = [Self.healthy("first")]
            var faulty: [(name: String, hook: String)] = []
            for hook in Self.launchHooks {
                for action in Self.allActions {
                    let name = "opt-\(hook == "willFinishLaunching" ? "wfl" : "dfl")-\(action)"
                    // hang forever: an optional service that never answers must not hold the launch.
                    let duration = action == "block" ? "1s" : nil
                    services.append(ProbeSpec(name, faults: [.init(hook: hook, action: action, duration: duration)]))
                    faulty.append((name, hook))
                }
                services.append(ProbeSpec(hook == "willFinishLaunching" ? "middle" : "last"))
            }
            let healthy = ["first", "middle", "last"]
            try await DaemonUnderTest.with(services: services, host: Self.host) { daemon in
                try await daemon.startOrFail()
                let statusText = try await daemon.status()["StatusText"] ?? ""
                let expectedStart = "active · 3 services · disabled: " + faulty.map(\.name).joined(separator: ", ")
                #expect(statusText.hasPrefix(expectedStart), "StatusText: \(statusText)\nexpected it to begin: \(expectedStart)")
                for (name, hook) in faulty {
                    try await Self.waitForRecord(daemon, mentioning: ["optional service disabled", name, Self.hookName(hook)], maxPriority: 4)
                }

                // The rest still get every event; the disabled ones get nothing more.
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.signal("SIGRTMIN+18")
                try await daemon.waitUntil("every healthy probe recorded the memory warning") {
                    let log = daemon.probeLog
                    return healthy.allSatisfy { log.contains($0, "didReceiveMemoryWarning.critical") }
                }
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let diagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "\(diagnostics)")

                let log = daemon.probeLog
                let full = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
                            "didReceiveMemoryWarning.critical", "willTerminate"]
                for name in healthy {
                    #expect(log.events(of: name) == full, "\(name) missed an event: \(log.events(of: name))")
                }
                #expect(log.instances(that: "didEnterBackground") == healthy.reversed(), "\(log)")
                #expect(log.instances(that: "willTerminate") == healthy.reversed(), "\(log)")
                for (name, hook) in faulty {
                    let reached = hook == "willFinishLaunching" ? ["willFinishLaunching"] : ["willFinishLaunching", "didFinishLaunching"]
                    #expect(log.events(of: name) == reached, "disabled service \(name) got more events: \(log.events(of: name))")
                }
            }
        }

        // MARK: Running hooks

        /// The hooks of a running host, one faulty probe each, in registration order. The memory
        /// warning's probe comes last, so it is the first to get `willTerminate` (reverse order)
        /// while its hook from just before the stop still runs.
        static let runningHooks = ["didBecomeActive", "willResignActive", "didEnterBackground", "willEnterForeground",
                                   "willTerminate", "didReceiveMemoryWarning"]

        @Test("a fault in each running hook (required and optional alike) is reported; no service is skipped, the overrunning one gets its later events, stop exits 0",
              arguments: ["throw", "hang", "block"])
        func runningHookFaults(action: String) async throws {
            var services = [Self.healthy("first")]
            for (index, hook) in Self.runningHooks.enumerated() {
                // willTerminate: hang forever, block well past the terminate deadline (1.5s).
                let duration = hook == "willTerminate" ? (action == "block" ? "3s" : nil) : Self.duration(of: action)
                services.append(ProbeSpec("f-\(hook)", required: index.isMultiple(of: 2), faults: [.init(hook: hook, action: action, duration: duration)]))
            }
            services.append(Self.healthy("last"))
            let names = services.map(\.name)
            let overruns = action != "throw"

            try await DaemonUnderTest.with(services: services, host: Self.host) { daemon in
                // Waits until every probe recorded `event` `count` times: events queued behind an
                // overrunning hook arrive once it returned.
                func everyProbeRecorded(_ event: String, count: Int = 1) async throws {
                    try await daemon.waitUntil("every probe recorded \(event) ×\(count)") {
                        let log = daemon.probeLog
                        return names.allSatisfy { log.count($0, event) >= count }
                    }
                }
                func expectStatus(mentions overrun: String) async throws {
                    guard overruns else { return }
                    let text = try await daemon.status()["StatusText"] ?? ""
                    #expect(text.contains("f-\(overrun) overran \(Self.hookName(overrun)) (300ms)"), "StatusText: \(text)")
                    #expect(text.contains("8 services"), "a service was disabled: \(text)")
                }

                // A fault in didBecomeActive does not stop the launch (only launch hooks can).
                try await daemon.startOrFail()
                try await expectStatus(mentions: "didBecomeActive")
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await everyProbeRecorded("didEnterBackground")
                try await expectStatus(mentions: "didEnterBackground")
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                try await everyProbeRecorded("didBecomeActive", count: 2)
                try await daemon.signal("SIGRTMIN+18")
                try await everyProbeRecorded("didReceiveMemoryWarning.critical")
                try await expectStatus(mentions: "didReceiveMemoryWarning")
                #expect(try await daemon.status()["ActiveState"] == "active")

                // Stop while f-didReceiveMemoryWarning is still inside its hook (hang, block): its
                // willTerminate waits for it, within the terminate deadline. f-willTerminate never
                // (or too late) returns: still a clean exit.
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let diagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "not a clean exit: \(diagnostics)")

                let log = daemon.probeLog
                let full = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
                            "willEnterForeground", "didBecomeActive", "didReceiveMemoryWarning.critical", "willTerminate"]
                for name in names {
                    #expect(log.events(of: name) == full, "\(name) missed or repeated an event: \(log.events(of: name))\n\(diagnostics)")
                    #expect(log.violations(of: name).isEmpty, "\(name): \(log.violations(of: name))")
                }
                // Terminate goes in reverse registration order even for a service still busy in an
                // earlier hook: the host waits for it (within the terminate deadline) rather than
                // exiting before its queued willTerminate ran.
                #expect(log.instances(that: "willTerminate") == names.reversed(), "\(log)")

                // Each fault is named in the journal with its service and hook.
                for hook in Self.runningHooks {
                    let service = "f-\(hook)"
                    if action == "throw" {
                        try await Self.waitForRecord(daemon, mentioning: ["\(service) threw in \(Self.hookName(hook))", "probe fault injected"], maxPriority: 3, whileRunning: false)
                    } else {
                        let deadline = hook == "willTerminate" ? "1.5s" : "300ms"
                        try await Self.waitForRecord(daemon, mentioning: ["\(service) overran \(Self.hookName(hook)) (\(deadline))"], maxPriority: 4, whileRunning: false)
                    }
                }
            }
        }

        // MARK: Reload

        @Test("a service whose didUpdateConfiguration throws, refuses, hangs or blocks is restarted with the new settings; the others are untouched",
              arguments: allActions)
        func configurationUpdateFault(action: String) async throws {
            let fault = ProbeSpec.Fault(hook: "didUpdateConfiguration", action: action, duration: Self.duration(of: action))
            let before = [Self.healthy("steady"), ProbeSpec("cfg", faults: [fault])]
            // Changed settings (the fault is gone), so the host offers the new section live.
            let after = [Self.healthy("steady"), Self.healthy("cfg")]
            try await DaemonUnderTest.with(services: before, host: Self.host) { daemon in
                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                try daemon.writeConfig(services: after, host: Self.host)
                let reload = try await daemon.reload()
                #expect(reload.succeeded, "\(reload)")
                try await daemon.waitUntil("cfg was restarted: a second didBecomeActive") {
                    daemon.probeLog.count("cfg", "didBecomeActive") >= 2
                }
                if action == "throw" {
                    try await Self.waitForRecord(daemon, mentioning: ["cfg threw in applicationDidUpdateConfiguration"], maxPriority: 3)
                } else if action != "refuse" {
                    try await Self.waitForRecord(daemon, mentioning: ["cfg overran applicationDidUpdateConfiguration (300ms)"], maxPriority: 4)
                }
                try await daemon.waitUntil("the reload finished (StatusText back to active · 2 services)") {
                    try await daemon.status()["StatusText"]?.hasPrefix("active · 2 services") == true
                }
                let status = try await daemon.status()
                #expect(status["StatusText"]?.contains("reload failed") == false, "\(status)")
                #expect(try await daemon.mainPID() == pid, "the daemon restarted")

                // The new instance runs without the fault and answers like the untouched one.
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.waitUntil("both probes recorded didEnterBackground") {
                    let log = daemon.probeLog
                    return log.contains("cfg", "didEnterBackground") && log.contains("steady", "didEnterBackground")
                }
                let log = daemon.probeLog
                let launch = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"]
                // The old instance is told, terminated (once its hook returned), then the new one launches.
                #expect(log.events(of: "cfg") == launch + ["didUpdateConfiguration", "willTerminate"] + launch + ["willResignActive", "didEnterBackground"],
                        "\(log)")
                #expect(log.events(of: "steady") == launch + ["willResignActive", "didEnterBackground"], "steady was disturbed: \(log)")
            }
        }
    }
}
