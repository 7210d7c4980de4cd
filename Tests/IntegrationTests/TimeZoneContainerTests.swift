import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// A time zone changed for real under systemd as PID 1 (252, and 257 in scripts/test.sh's
    /// trixie pass): timedated's `SetTimezone` (bus-activated there), the call its command line
    /// makes, replaces the
    /// container's /etc/localtime, which the daemon watches through its unit's read-only /etc.
    /// The clock is never set: it is not namespaced (the fake-clock tests cover steps and
    /// midnights). A boot of its own: the test changes the config.
    @Suite(.serialized, .needsSystemManager, .bootedSystem)
    struct TimeZoneContainerTests {
        typealias Support = IntegrationSuites.SystemManagerTests

        /// timedated's `SetTimezone(zone, interactive: false)`: the zone link, nothing else.
        static func setZone(_ system: SystemManager, _ zone: String) async throws -> CommandResult {
            try await system.run(["busctl", "call", "org.freedesktop.timedate1", "/org/freedesktop/timedate1", "org.freedesktop.timedate1", "SetTimezone", "sb", zone, "false"])
        }

        /// The logger service's record of a change (exec's lines carry `EVENT=` too).
        static func isAudit(_ record: [String: String]) -> Bool {
            record["EVENT"] == "significantTimeChange" && record["MESSAGE"]?.hasPrefix("significantTimeChange: ") == true
                && record["CAUSE"]?.contains("timezone") == true
        }

        // Fails on a daemon that does not watch /etc/localtime, or tells the same zone twice (the
        // link replaced with the same zone: the daemon's second look says nothing).
        @Test("timedated's SetTimezone: every service's hook with cause timezone, the journal line with the zone, exec's APPHOST_TIME_CHANGE; the same zone again is nothing")
        func aNewZoneReachesEveryService() async throws {
            guard let system = SystemManager.current else { throw HarnessError("no booted system") }
            let config = try system.read("/etc/apphostd/apphostd.yaml")
            try system.write(config + """
                  - name: clock-watch
                    type: exec
                    settings:
                      on: [significantTimeChange]
                      run: ["/bin/sh", "-c", "echo \\"time change: $APPHOST_TIME_CHANGE\\""]

                """, to: "/etc/apphostd/apphostd.yaml")
            let restart = try await system.systemctl("restart", Support.unit)
            try #require(restart.succeeded, "\(restart)")
            try await Support.waitForStatus(system, "active with the exec service") { $0["StatusText"]?.hasPrefix("active · 5 services") == true }
            let invocation = try await Support.invocation(system)
            let daemon = ["_SYSTEMD_INVOCATION_ID=\(invocation)"]
            let start = try await system.journal(daemon).first { $0["MESSAGE"]?.hasSuffix(" starting") == true }
            #expect(start?["TIME_CHANGES"] == "the clock, midnight and /etc/localtime", "\(start ?? [:])")

            let cursor = try await system.journalCursor()
            // The zone only: with the RTC in UTC (LocalRTC false, checked) timedated touches no
            // clock for it. The machine's clock is never set, here or anywhere.
            let rtc = try await system.run(["busctl", "get-property", "org.freedesktop.timedate1", "/org/freedesktop/timedate1", "org.freedesktop.timedate1", "LocalRTC"])
            try #require(rtc.stdout == "b false\n", "\(rtc)")
            let berlin = try await Self.setZone(system, "Europe/Berlin")
            try #require(berlin.succeeded, "\(berlin)")
            // Berlin may be a day ahead of UTC (after 23:00): then the cause is timezone,midnight.
            try await Support.waitForJournal(system, "exec's line for the zone", matches: daemon, after: cursor) {
                $0["MESSAGE"]?.hasPrefix("time change: timezone") == true
            }
            // The same zone again: timedated leaves the link as it is, so the link is replaced
            // here as timedated replaces it (a new link renamed over it): an event, no change.
            let again = try await system.run(["sh", "-c", "ln -s ../usr/share/zoneinfo/Europe/Berlin /etc/.localtime.new && mv -T /etc/.localtime.new /etc/localtime"])
            try #require(again.succeeded, "\(again)")
            let tokyo = try await Self.setZone(system, "Asia/Tokyo")
            try #require(tokyo.succeeded, "\(tokyo)")
            // Tokyo may be a day ahead of Berlin: then its cause is timezone,midnight. Done once
            // the logger recorded two changes and exec ran twice.
            var records: [[String: String]] = []
            let done = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) {
                records = try await system.journal(daemon, after: cursor)
                return records.filter(Self.isAudit).count >= 2
                    && records.filter { $0["MESSAGE"]?.hasPrefix("time change: ") == true }.count >= 2
            }
            let text = records.suffix(60).map(SystemManager.line).joined(separator: "\n")
            #expect(done, "two changes told: \(text)")
            let zoneLines = records.filter { $0["MESSAGE"]?.hasPrefix("the time zone is now") == true }
            #expect(zoneLines.count == 2 && zoneLines.first?["MESSAGE"]?.hasPrefix("the time zone is now Europe/Berlin") == true
                && zoneLines.last?["MESSAGE"]?.hasPrefix("the time zone is now Asia/Tokyo") == true, "\(text)")
            #expect(zoneLines.allSatisfy { $0["CAUSE"]?.hasPrefix("timezone") == true }, "\(text)")
            let audit = records.filter(Self.isAudit)
            #expect(audit.count == 2 && audit.allSatisfy { $0["CAUSE"]?.hasPrefix("timezone") == true && $0["REQUEST_ID"] != nil }, "the logger's records: \(text)")
            let execLines = records.filter { $0["MESSAGE"]?.hasPrefix("time change: ") == true }
            #expect(execLines.count == 2, "\(text)")
        }
    }
}
