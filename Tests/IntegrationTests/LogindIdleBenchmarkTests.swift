import AppHostTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites.LogindBenchmarkTests {
    /// One thread of the daemon at one instant, as /proc shows it inside the container.
    struct ThreadSample {
        let tid: Int
        /// `comm`: the name the daemon gave it (`apphost-edge`), libdispatch's (the end of a
        /// queue's label: `-qos.overcommit`), or the process's.
        let name: String
        /// `voluntary_ctxt_switches + nonvoluntary_ctxt_switches`: each is a sleep and a wake.
        let switches: Int
        /// Its nice value (libdispatch sets it from the thread's QoS).
        let nice: Int
        /// The system call it sleeps in (`/proc/TID/syscall`), or nil when unreadable.
        let syscall: Int?
    }

    /// The daemon at one instant: its threads and its CPU time (`utime + stime`, in ticks).
    struct ProcessSample {
        let threads: [Int: ThreadSample]
        let cpuTicks: Int
    }

    /// Prints each thread of the process `$1` (`tid|comm|switch counts|stat after the name|syscall`),
    /// then `proc|` and the process's own stat.
    static let sampleScript = #"""
        cd /proc/$1/task || exit 1
        for t in *; do
          s=$(cat "$t/stat" 2>/dev/null) || continue
          c=$(grep ctxt_switches "$t/status" 2>/dev/null | tr -s ' \t\n' '   ')
          printf '%s|%s|%s|%s|%s\n' "$t" "$(cat "$t/comm")" "$c" "${s##*") "}" "$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
        done
        s=$(cat /proc/$1/stat) || exit 1
        printf 'proc|%s\n' "${s##*") "}"
        """#

    /// Reads the daemon's threads and CPU time from inside the container.
    static func sample(_ system: SystemManager, pid: Int) async throws -> ProcessSample {
        let result = try await system.run(["sh", "-c", sampleScript, "sh", "\(pid)"])
        guard result.succeeded else { throw HarnessError("cannot read /proc/\(pid) in the container: \(result)") }
        var threads: [Int: ThreadSample] = [:]
        var cpuTicks: Int?
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            // The stat after "(comm) ": state is [0], utime [11], stime [12], nice [16].
            if parts.count == 2, parts[0] == "proc" {
                let fields = parts[1].split(separator: " ")
                if fields.count > 12, let utime = Int(fields[11]), let stime = Int(fields[12]) { cpuTicks = utime + stime }
                continue
            }
            guard parts.count == 5, let tid = Int(parts[0]) else { continue }
            let counts = parts[2].split(separator: " ").compactMap { Int($0) }
            let stat = parts[3].split(separator: " ")
            guard counts.count == 2, stat.count > 16, let nice = Int(stat[16]) else { continue }
            threads[tid] = ThreadSample(tid: tid, name: parts[1], switches: counts.reduce(0, +), nice: nice, syscall: Int(parts[4]))
        }
        guard let cpuTicks, !threads.isEmpty else { throw HarnessError("cannot parse /proc/\(pid) as read in the container:\n\(result.stdout)") }
        return ProcessSample(threads: threads, cpuTicks: cpuTicks)
    }

    /// A thread's part of the window: what grew while it lived (a thread begun inside counts
    /// whole, one that ended inside takes its count with it: process_bench.py's rule).
    struct ThreadWakeUps {
        let thread: ThreadSample
        let wakeUps: Int
        let isNew: Bool
    }

    /// The figures of one window.
    struct IdleWindow {
        let wakeUps: Int
        let cpuMilliseconds: Int
        let threadsBefore: Int
        let threadsAfter: Int
        let byThread: [ThreadWakeUps]
    }

    static func window(pid: Int, before: ProcessSample, after: ProcessSample) -> IdleWindow {
        let byThread = after.threads.values.sorted { $0.tid < $1.tid }.map { thread in
            ThreadWakeUps(thread: thread, wakeUps: thread.switches - (before.threads[thread.tid]?.switches ?? 0), isNew: before.threads[thread.tid] == nil)
        }
        let ticks = Int(sysconf(Int32(_SC_CLK_TCK)))
        return IdleWindow(
            wakeUps: byThread.reduce(0) { $0 + $1.wakeUps },
            cpuMilliseconds: (after.cpuTicks - before.cpuTicks) * 1000 / max(ticks, 1),
            threadsBefore: before.threads.count, threadsAfter: after.threads.count, byThread: byThread
        )
    }

    /// `main`, the daemon's own names (`apphost-edge`), and libdispatch's threads (whose names
    /// change with the queue they serve) told apart by where they sleep: its manager thread in
    /// `epoll_wait` (its timers, among them the 1 Hz monitor of the worker pool), a worker in `futex`.
    static func role(_ thread: ThreadSample, pid: Int) -> String {
        if thread.tid == pid { return "main" }
        if thread.name.hasPrefix("apphost-") { return thread.name }
        let sleepsIn = syscallName(thread.syscall)
        return sleepsIn.hasPrefix("epoll") ? "dispatch manager" : "dispatch worker"
    }

    /// The x86-64 numbers of the calls a sleeping thread of the daemon sits in.
    static func syscallName(_ number: Int?) -> String {
        switch number {
        case nil: "?"
        case 7: "poll"
        case 202: "futex"
        case 232: "epoll_wait"
        case 271: "ppoll"
        case 281: "epoll_pwait"
        case 441: "epoll_pwait2"
        case let number?: "syscall \(number)"
        }
    }

    static let settle = Duration.seconds(8)
    static let idleWindow = Duration.seconds(30)
    static let noWatchdog = "/etc/systemd/system/apphostd.service.d/no-watchdog.conf"

    /// Not pass/fail: Benchmarks/README.md's "Idle with logind followed" (`APPHOSTD_BENCH_LOGIND=1
    /// swift test --filter LogindBenchmarkTests/idleWithAndWithoutLogind`). The shipped config
    /// with `host.logind: true`, then `false`, twice over, `WatchdogSec=0` by a drop-in: each run
    /// restarts the unit, waits until it is active (and, with logind, holds its inhibitors),
    /// settles 8 s, then counts over 30 s every thread's context switches (each a sleep and a
    /// wake), the CPU time and the threads, and prints them thread by thread.
    @Test func idleWithAndWithoutLogind() async throws {
        guard let system = SystemManager.current else { throw HarnessError("no booted system") }
        let good = try system.read(Suite.configPath)
        let without = good.replacingOccurrences(of: "\n  logind: true\n", with: "\n  logind: false\n")
        try #require(without != good, "the installed config has no '  logind: true' line")
        _ = try await system.run(["mkdir", "-p", "/etc/systemd/system/apphostd.service.d"])
        try system.write("[Service]\nWatchdogSec=0\n", to: Self.noWatchdog)
        try await system.systemctl("daemon-reload")
        var rows: [String] = []
        do {
            for round in 1...2 {
                for logind in [true, false] {
                    try system.write(logind ? good : without, to: Suite.configPath)
                    try await system.systemctl("reset-failed", Suite.unit)
                    let restart = try await system.systemctl("restart", Suite.unit, timeout: .seconds(120))
                    try #require(restart.succeeded, "\(restart)")
                    let status = try await Suite.waitForStatus(system, "the daemon active") { Suite.isActiveAndForeground($0) && $0["MainPID"] != "0" }
                    let watchdog = try await system.show(Suite.unit, ["WatchdogUSec"])["WatchdogUSec"] ?? "?"
                    #expect(watchdog == "0" || watchdog == "infinity", "the drop-in did not turn the watchdog off: WatchdogUSec=\(watchdog)")
                    if logind {
                        try await Suite.waitForInhibitors(system)
                    } else {
                        #expect(try await Suite.daemonInhibitors(system).isEmpty, "host.logind: false, yet inhibitors are held")
                    }
                    let pid = try #require(Int(status["MainPID"] ?? ""))
                    try await Task.sleep(for: Self.settle)
                    let before = try await Self.sample(system, pid: pid)
                    try await Task.sleep(for: Self.idleWindow)
                    let after = try await Self.sample(system, pid: pid)
                    let still = try await system.show(Suite.unit)
                    #expect(still["ActiveState"] == "active" && still["MainPID"] == "\(pid)", "the daemon did not stay up through the window: \(still)")
                    let window = Self.window(pid: pid, before: before, after: after)
                    let threads = window.byThread.map { entry in
                        let thread = entry.thread
                        return "\(thread.tid) \(Self.role(thread, pid: pid)) (nice \(thread.nice), in \(Self.syscallName(thread.syscall)))"
                            + "\(entry.isNew ? ", new" : ""): \(entry.wakeUps)"
                    }
                    let row = "idle 30 s, systemd \(system.systemdVersion), logind \(logind ? "on" : "off"), round \(round): \(window.wakeUps) wake-ups, "
                        + "\(window.cpuMilliseconds) ms CPU, threads \(window.threadsBefore) → \(window.threadsAfter); by thread: \(threads.joined(separator: ", "))"
                    print("IntegrationTests: logind idle benchmark: \(row)")
                    rows.append(row)
                }
            }
        } catch {
            Issue.record(error)
        }
        let table = rows.map { "IntegrationTests:   " + $0 }.joined(separator: "\n")
        print("IntegrationTests: logind idle benchmark, systemd \(system.systemdVersion), WatchdogSec=0, \(Self.settle) settling then \(Self.idleWindow):\n" + table)
        try system.write(good, to: Suite.configPath)
        try? FileManager.default.removeItem(atPath: system.root + Self.noWatchdog)
        try await system.systemctl("daemon-reload")
        try await system.systemctl("restart", Suite.unit, timeout: .seconds(120))
        try await Suite.ensureActive(system)
    }
}
