import Foundation
import Testing

extension IntegrationSuites {
    /// Signals to lifecycle: SIGUSR1 toggles, queued real-time transitions, and a storm of both.
    ///
    /// `SIGRTMIN+18` (trim memory → a critical memory warning in every probe) serves as a marker:
    /// pending signals are dequeued lowest number first and handled on one serial path, so once the
    /// marker's warning is recorded, every signal sent before it has been handled.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonSignalTests {
        static let marker = "didReceiveMemoryWarning.critical"

        /// Sends the marker and waits until `probe` recorded it `expected` times in total.
        static func sendMarker(_ daemon: DaemonUnderTest, probe: String, expected: Int) async throws {
            try await daemon.signal("SIGRTMIN+18")
            try await daemon.waitUntil("\(probe) recorded marker #\(expected) (\(marker))", timeout: .seconds(30)) {
                daemon.probeLog.count(probe, marker) >= expected
            }
        }

        @Test("StatusText follows SIGUSR1 toggles: background, then active again")
        func usr1Toggles() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b")]) { daemon in
                try await daemon.startOrFail()
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("background")
                var log = daemon.probeLog
                #expect(log.events(of: "a").suffix(2) == ["willResignActive", "didEnterBackground"], "\(log)")
                // Down events go in reverse registration order.
                #expect(log.instances(that: "didEnterBackground") == ["b", "a"], "\(log)")

                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("active")
                log = daemon.probeLog
                #expect(log.events(of: "a").suffix(2) == ["willEnterForeground", "didBecomeActive"], "\(log)")
                #expect(log.instances(that: "willEnterForeground") == ["a", "b"], "\(log)")
                for name in ["a", "b"] { #expect(log.violations(of: name).isEmpty, "\(name): \(log.violations(of: name))") }
            }
        }

        @Test("SIGRTMIN+1 enters background once (a repeat is a no-op), SIGRTMIN+2 returns to active once")
        func realtimeTransitionsAreIdempotent() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b")]) { daemon in
                try await daemon.startOrFail()
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.signal("SIGRTMIN+1")
                try await Self.sendMarker(daemon, probe: "a", expected: 1)
                #expect(try await daemon.stateWord() == "background")
                var log = daemon.probeLog
                #expect(log.count("a", "didEnterBackground") == 1, "repeated background was not a no-op: \(log)")
                #expect(log.count("b", "didEnterBackground") == 1, "\(log)")

                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                try await daemon.signal("SIGRTMIN+2")
                try await Self.sendMarker(daemon, probe: "a", expected: 2)
                #expect(try await daemon.stateWord() == "active")
                log = daemon.probeLog
                #expect(log.count("a", "willEnterForeground") == 1, "repeated foreground was not a no-op: \(log)")
                #expect(log.count("a", "didBecomeActive") == 2, "\(log)")
                for name in ["a", "b"] { #expect(log.violations(of: name).isEmpty, "\(name): \(log.violations(of: name))") }
            }
        }

        /// The kernel keeps the order of real-time signals of one number, but dequeues pending
        /// signals of different numbers lowest first: when the reader falls behind in a storm, a
        /// queued `SIGRTMIN+1` can overtake an earlier `SIGRTMIN+2`. So the storm's promise is
        /// consistency (legal transitions only, `STATUS=` equals the services' state, the daemon
        /// survives), and an explicit transition sent after the storm is honoured.
        @Test("a storm of 2000 SIGUSR1 with queued RTMIN transitions: only legal transitions, STATUS= agrees with the services, the next explicit transition is honoured")
        func signalStorm() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b")]) { daemon in
                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                if pid <= 0 { throw HarnessError("no MainPID\n\(await daemon.diagnostics())") }
                // 2000 SIGUSR1, every 20th followed by a queued RTMIN+1 or RTMIN+2 (100 in all), then the marker.
                let storm = """
                    p=$1
                    for i in $(seq 1 2000); do
                        kill -USR1 "$p" || exit 1
                        if [ $((i % 20)) -eq 0 ]; then kill -s "RTMIN+$(( (i / 20) % 2 + 1 ))" "$p" || exit 1; fi
                    done
                    kill -s RTMIN+18 "$p"
                    """
                let clock = ContinuousClock()
                let began = clock.now
                let sent = try await ProcessRunner.run(["bash", "-c", storm, "storm", "\(pid)"])
                try #require(sent.succeeded, "the storm could not be sent: \(sent)")
                try await daemon.waitUntil("both probes handled the storm's final marker", timeout: .seconds(120)) {
                    let log = daemon.probeLog
                    return log.count("a", Self.marker) >= 1 && log.count("b", Self.marker) >= 1
                }
                print("IntegrationTests: storm sent and handled in \(clock.now - began)")
                let status = try await daemon.status()
                let log = daemon.probeLog
                #expect(status["ActiveState"] == "active", "the daemon did not survive the storm: \(status)")
                #expect(try await daemon.mainPID() == pid, "the daemon was restarted")
                let reported = DaemonUnderTest.stateWord(of: status["StatusText"] ?? "")
                #expect(reported == "active" || reported == "background", "StatusText after the storm: \(status["StatusText"] ?? "")")
                for name in ["a", "b"] {
                    #expect(log.violations(of: name).isEmpty, "\(name): illegal transitions \(log.violations(of: name).prefix(10))")
                    #expect(log.lastState(of: name) == reported, "\(name) ended in \(log.lastState(of: name) ?? "?"), STATUS= says \(reported)")
                }
                let transitions = log.count("a", "didEnterBackground") + log.count("a", "willEnterForeground")
                print("IntegrationTests: storm produced \(transitions) transitions in probe a")
                #expect(transitions >= 2, "the storm produced no transitions: \(log)")

                let target = reported == "background" ? ("SIGRTMIN+2", "active") : ("SIGRTMIN+1", "background")
                try await daemon.signal(target.0)
                try await Self.sendMarker(daemon, probe: "a", expected: 2)
                #expect(try await daemon.stateWord() == target.1, "\(target.0) after the storm was not honoured")
                #expect(daemon.probeLog.lastState(of: "a") == target.1)
            }
        }
    }
}
