import AppHost
import AppHostTestKit
import Foundation
import Logging
import ServiceContextModule
import Synchronization
import Testing

/// A shared, ordered record of `"name:event"` entries that tests await and inspect: the test
/// kit's `TestLog`, plus a mark for what the test already looked at.
final class Journal: Sendable {
    private let log = TestLog<String>()
    private let drained = Mutex(0)

    func record(_ entry: String) {
        log.append(entry)
    }

    var entries: [String] { log.all }

    /// The entries recorded since the last `drain()`.
    func drain() -> [String] {
        drained.withLock { drained in
            let all = log.all
            defer { drained = all.count }
            return Array(all[drained...])
        }
    }

    /// Entries whose event part is `event`, as the service names, in order.
    func services(for event: String) -> [String] {
        entries.compactMap { entry in
            let parts = entry.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[1] == event ? String(parts[0]) : nil
        }
    }

    /// Waits until `entry` was recorded since the last `drain()` (now or earlier); false after `timeout`.
    func wait(for entry: String, timeout: Duration = .seconds(5)) async -> Bool {
        await log.first(from: drained.withLock { $0 }, timeout: timeout) { $0 == entry } != nil
    }
}

/// A one-shot gate: hooks wait on it until the test opens it.
final class Latch: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let openAlready = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Counts how many hooks of one service run at the same time, and the most ever seen.
final class ConcurrencyProbe: Sendable {
    private let state = Mutex<(current: Int, maximum: Int)>((0, 0))

    func enter() { state.withLock { $0.current += 1; $0.maximum = max($0.maximum, $0.current) } }
    func leave() { state.withLock { $0.current -= 1 } }
    var maximum: Int { state.withLock { $0.maximum } }
}

/// Hands out 1, 2, 3, ...
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

struct TestError: Error, CustomStringConvertible {
    var description: String
}

/// A service that writes `"name:event"` to the journal at the start of every hook, and can be
/// told to refuse, throw or hang in chosen hooks. Kept beside the test kit's recording
/// (`withTestHost`): these tests build the host under test themselves, and their record holds
/// the run loop's start and cancellation, which the kit's does not.
struct Recorder: ApplicationService {
    enum LaunchAnswer: Sendable { case accept, refuse, fail }

    let name: String
    let journal: Journal
    var willFinish: LaunchAnswer = .accept
    var didFinish: LaunchAnswer = .accept
    /// Event name → latch the hook waits on before it returns.
    var hangs: [String: Latch] = [:]
    var probe: ConcurrencyProbe?
    var configurationAnswer: ConfigurationUpdate = .restartRequired
    /// Runs a `run(_:)` loop that records its start and its cancellation.
    var hasRunLoop = false

    private func hook(_ event: String) async {
        probe?.enter()
        journal.record("\(name):\(event)")
        if let latch = hangs[event] { await latch.wait() }
        probe?.leave()
    }

    private func answer(_ answer: LaunchAnswer, _ event: String) async throws -> Bool {
        await hook(event)
        switch answer {
        case .accept: return true
        case .refuse: return false
        case .fail: throw TestError(description: "\(name) broke in \(event)")
        }
    }

    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        try await answer(willFinish, "willFinishLaunching")
    }

    func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        try await answer(didFinish, "didFinishLaunching")
    }

    func applicationDidBecomeActive(_ application: ApplicationHandle) async throws { await hook("didBecomeActive") }
    func applicationWillResignActive(_ application: ApplicationHandle) async throws { await hook("willResignActive") }
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws { await hook("didEnterBackground") }
    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws { await hook("willEnterForeground") }
    func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {
        await hook("didReceiveMemoryWarning.\(level.rawValue)")
    }
    /// Recorded with what changed: `significantTimeChange(clock,midnight)`.
    func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
        await hook("significantTimeChange(\(ServiceContext.current?.significantTimeChange?.description ?? "-"))")
    }
    /// Recorded with the value read through the handle and the cause: `networkDidChange(available; network)`.
    func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        await hook("networkDidChange(\(application.networkPath); \(ServiceContext.current?.hostRequestCause ?? "-"))")
    }
    func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        await hook("powerStateDidChange(\(application.powerState); \(ServiceContext.current?.hostRequestCause ?? "-"))")
    }
    func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        await hook("protectedDataWillBecomeUnavailable")
    }
    func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        await hook("protectedDataDidBecomeAvailable")
    }
    func applicationWillTerminate(_ application: ApplicationHandle) async throws { await hook("willTerminate") }

    func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        await hook("didUpdateConfiguration")
        return configurationAnswer
    }

    func run(_ application: ApplicationHandle) async throws {
        guard hasRunLoop else { return }
        journal.record("\(name):run.start")
        // Parks until cancelled; the sleep is a wait for cancellation, not a synchronisation.
        do {
            try await Task.sleep(for: .seconds(3600))
        } catch {
            journal.record("\(name):run.cancelled")
        }
    }
}

/// A logger that drops everything, so expected warnings do not clutter the test output.
let quietLogger = Logger(label: "apphost-tests") { _ in SwiftLogNoOpLogHandler() }

/// A descriptor around a recorder.
func descriptor(_ recorder: Recorder, required: Bool = true, deadline: Duration? = nil, launchDeadline: Duration? = nil) -> ServiceDescriptor {
    ServiceDescriptor(name: recorder.name, isRequired: required, deadline: deadline, launchDeadline: launchDeadline, service: recorder)
}

/// A host over plain recorders named `names`.
func makeHost(
    _ names: [String],
    journal: Journal,
    configuration: PluggableApplicationHost.Configuration = .init(hookDeadline: .seconds(2), launchDeadline: .seconds(2), terminateDeadline: .seconds(2))
) throws -> PluggableApplicationHost {
    try PluggableApplicationHost(
        services: names.map { descriptor(Recorder(name: $0, journal: journal)) },
        configuration: configuration,
        logger: quietLogger
    )
}

/// A launched host of one service, `a`, whose `didEnterBackground` waits: `queue` adds requests
/// while that hook runs, the hook then returns, and once every request was carried out `after`
/// runs on the still running host. The hook's end comes on the loop's one input stream after
/// the requests, so the loop has queued (and merged) them all before its next turn.
func whileABackgroundHookWaits(
    journal: Journal,
    queue: (PluggableApplicationHost, inout ThrowingTaskGroup<Void, any Error>) -> Void,
    after: (PluggableApplicationHost) async throws -> Void = { _ in }
) async throws {
    let slow = Latch()
    let host = try PluggableApplicationHost(
        services: [descriptor(Recorder(name: "a", journal: journal, hangs: ["didEnterBackground": slow]))],
        configuration: .init(hookDeadline: .seconds(30), launchDeadline: .seconds(5), terminateDeadline: .seconds(5)),
        logger: quietLogger
    )
    try await host.withRunning {
        try await host.launched()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addImmediateTask { try await host.enterBackground() }
            #expect(await journal.wait(for: "a:didEnterBackground"))
            queue(host, &group)
            slow.open()
            try await group.waitForAll()
        }
        try await after(host)
    }
}

func events(_ names: [String], _ event: String) -> [String] {
    names.map { "\($0):\(event)" }
}

/// Launch state in memory: counts launches and keeps a running marker, like the state directory.
final class InMemoryLaunchState: LaunchStateStorage {
    private let state = Mutex<(launches: Int, isRunning: Bool)>((0, false))
    private let installationID = InstallationID()

    func beginLaunch() throws -> LaunchOptions {
        state.withLock { state in
            defer {
                state.launches += 1
                state.isRunning = true
            }
            return LaunchOptions(
                kind: state.launches == 0 ? .firstLaunch : .restore,
                launchCount: state.launches + 1,
                installationID: installationID,
                previousExit: state.launches == 0 ? .none : (state.isRunning ? .unclean : .clean)
            )
        }
    }

    func markCleanExit(of options: LaunchOptions) throws -> String? {
        state.withLock { $0.isRunning = false }
        return nil
    }
}
