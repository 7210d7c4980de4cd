import AppHost
import AppHostSystemd
import AppHostTestKit
import AppHostTestSupport
import Foundation
import Testing

/// The launch state store of a state directory, through the host.
@Suite struct LaunchOptionsTests {
    static var services: [ServiceDescriptor] { [ServiceDescriptor(name: "a", service: IdleService())] }

    static func configuration(_ directory: String?) -> PluggableApplicationHost.Configuration {
        .init(launchState: directory.map { LaunchStateFiles(directory: $0) }, stateDirectory: directory)
    }

    func host(in directory: String?) throws -> PluggableApplicationHost {
        try PluggableApplicationHost(services: Self.services, configuration: Self.configuration(directory))
    }

    @Test func firstLaunchThenCleanRestore() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let first = try host(in: directory)
        let options = try await first.withRunning {
            let options = try await first.launched()
            #expect(options.kind == .firstLaunch)
            #expect(options.isFirstLaunch)
            #expect(options.launchCount == 1)
            #expect(options.previousExit == .none)
            #expect(FileManager.default.fileExists(atPath: directory + "/running"))
            await first.terminate()
            #expect(!FileManager.default.fileExists(atPath: directory + "/running"))
            return options
        }

        let second = try host(in: directory)
        try await second.withRunning {
            let restored = try await second.launched()
            #expect(restored.kind == .restore)
            #expect(restored.launchCount == 2)
            #expect(restored.previousExit == .clean)
            #expect(restored.installationID == options.installationID)
        }
    }

    @Test func uncleanPreviousExit() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let crashed = try host(in: directory)
        let options = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await crashed.run() }
            let options = try await crashed.launched()
            // No terminate: cancelling run() stops the host at once, as if the process "died",
            // with its running marker in place.
            group.cancelAll()
            return options
        }

        let next = try host(in: directory)
        try await next.withRunning {
            let restored = try await next.launched()
            #expect(restored.kind == .restore)
            #expect(restored.launchCount == 2)
            #expect(restored.previousExit == .unclean)
            #expect(restored.previousRunEndedUncleanly)
            #expect(restored.installationID == options.installationID)
        }

        let third = try host(in: directory)
        try await third.withRunning {
            let options = try await third.launched()
            #expect(options.previousExit == .clean)
        }
    }

    @Test func corruptStateFailsLaunchWithoutLosingIt() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: directory + "/launch-state.json"))
        // The test kit's host records every hook call: none may come.
        try await withTestHost(Self.services, configuration: Self.configuration(directory)) { host in
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            guard case .stateDirectory(let reason)? = failure?.reason else {
                Issue.record("expected a state directory failure, got \(String(describing: failure))")
                return
            }
            #expect(reason.contains("launch-state.json"))
            #expect(host.calls.all.isEmpty)
            #expect(host.state == .notRunning)
            let kept = try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8)
            #expect(kept == "{not json")
        }
    }

    @Test func withoutStateDirectoryEveryLaunchIsFirst() async throws {
        let host = try host(in: nil)
        try await host.withRunning {
            let options = try await host.launched()
            #expect(options.kind == .firstLaunch)
            #expect(options.launchCount == 1)
        }
    }

    @Test("a launch removes what a killed run left of its atomic writes, and nothing of a live process")
    func leftoversOfKilledWritesAreRemoved() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = exitedProcessID()
        try #require(child > 0)
        let dead = directory + "/launch-state.json.tmp-\(child)"
        let live = directory + "/launch-state.json.tmp-1"
        for path in [dead, live] { #expect(FileManager.default.createFile(atPath: path, contents: Data("{".utf8))) }

        let host = try host(in: directory)
        try await host.withRunning {
            let options = try await host.launched()
            #expect(options.launchCount == 1)
            #expect(!FileManager.default.fileExists(atPath: dead), "the dead writer's temporary file is left")
            #expect(FileManager.default.fileExists(atPath: live), "a live process's temporary file was removed")
        }
    }

    @Test("a state directory deleted while running: the clean exit writes the launch state again, so the next launch is a restore")
    func deletedStateDirectoryIsWrittenAgainAtExit() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/state"
        let first = try host(in: directory)
        let options = try await first.withRunning {
            let options = try await first.launched()
            try FileManager.default.removeItem(atPath: directory)
            return options
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/launch-state.json"))

        let next = try host(in: directory)
        try await next.withRunning {
            let restored = try await next.launched()
            #expect(restored.kind == .restore)
            #expect(restored.launchCount == 2)
            #expect(restored.installationID == options.installationID)
            #expect(restored.previousExit == .clean)
        }
    }

    @Test("the launch state's directory is synced apart from its writes: the files are in place before, the sync names what it could not reach")
    func launchStateIsMadeDurableApart() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let storage = LaunchStateFiles(directory: root + "/state")
        let options = try storage.beginLaunch()
        #expect(options.launchCount == 1)
        // What a killed process leaves: written and renamed, whether synced or not.
        #expect(FileManager.default.fileExists(atPath: root + "/state/launch-state.json"))
        #expect(FileManager.default.fileExists(atPath: root + "/state/running"))
        try storage.makeLaunchDurable()

        try FileManager.default.removeItem(atPath: root + "/state")
        #expect(throws: (any Error).self) { try storage.makeLaunchDurable() }
        do {
            try storage.makeLaunchDurable()
        } catch {
            #expect("\(error)".contains("open \(root)/state/launch-state.json: No such file or directory"), "\(error)")
        }
    }

    @Test("the record synced after READY=1 is kept as launch-state.json.previous until the next launch's is synced")
    func syncedRecordIsKeptAsPrevious() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = LaunchStateFiles(directory: directory)
        let first = try storage.beginLaunch()
        #expect(!FileManager.default.fileExists(atPath: directory + "/launch-state.json.previous"))
        try storage.makeLaunchDurable()
        let synced = try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8)
        #expect(synced == (try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8)))
        #expect(synced.contains("\"launchCount\" : 1"))

        _ = try storage.markCleanExit(of: first)
        let second = try storage.beginLaunch()
        #expect(second.launchCount == 2)
        #expect(try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8) == synced)
        try storage.makeLaunchDurable()
        #expect(try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8).contains("\"launchCount\" : 2"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains { $0.contains(".tmp-") }, "\(names)")
    }

    @Test("a record a crash of the machine left empty: the launch goes on from the one synced before, as after an unclean exit")
    func recordCutShortByACrashGoesBackToThePreviousOne() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = LaunchStateFiles(directory: directory)
        let first = try storage.beginLaunch()
        try storage.makeLaunchDurable()
        _ = try storage.markCleanExit(of: first)
        _ = try storage.beginLaunch()
        // The power went before the second launch's record reached the disk.
        try Data().write(to: URL(fileURLWithPath: directory + "/launch-state.json"))

        let third = try storage.beginLaunch()
        #expect(third.kind == .restore)
        #expect(third.installationID == first.installationID)
        #expect(third.launchCount == 2)
        #expect(third.previousExit == .unclean)
        #expect(third.previousExitCause == .unknown)
        try storage.makeLaunchDurable()
        #expect(try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8).contains("\"launchCount\" : 2"))
    }

    @Test("a first launch's record a crash left empty: a first launch again, after an unclean exit")
    func firstRecordCutShortIsAFirstLaunch() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data().write(to: URL(fileURLWithPath: directory + "/launch-state.json"))
        let options = try LaunchStateFiles(directory: directory).beginLaunch()
        #expect(options.kind == .firstLaunch)
        #expect(options.launchCount == 1)
        #expect(options.previousExit == .unclean)
    }

    @Test("a record that holds something else than a crash leaves (an edit by hand) is refused, naming it, even beside a good previous one; both are kept")
    func garbageInTheRecordIsRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = LaunchStateFiles(directory: directory)
        _ = try storage.beginLaunch()
        try storage.makeLaunchDurable()
        let synced = try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8)
        // A new file in the record's place, as an editor saves it.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: directory + "/launch-state.json"), options: .atomic)
        #expect {
            try storage.beginLaunch()
        } throws: { error in
            "\(error)".contains("\(directory)/launch-state.json") && "\(error)".contains("unreadable")
        }
        #expect(try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8) == "{not json")
        #expect(try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8) == synced)
    }

    @Test("a record a crash left zero-filled (a filesystem that orders no data before its size) goes back to the previous one too")
    func zeroFilledRecordGoesBackToThePreviousOne() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = LaunchStateFiles(directory: directory)
        let first = try storage.beginLaunch()
        try storage.makeLaunchDurable()
        // The next launch's record (a new file, renamed into place), its data lost.
        try Data(repeating: 0, count: 127).write(to: URL(fileURLWithPath: directory + "/launch-state.json"), options: .atomic)
        let next = try storage.beginLaunch()
        #expect(next.installationID == first.installationID)
        #expect(next.launchCount == 2)
        #expect(next.previousExit == .unclean)
    }

    @Test("a record from before launch-state.json.previous existed (an upgrade): kept as the previous one, synced, before the first launch replaces it")
    func upgradeKeepsTheRecordFoundAsThePreviousOne() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = LaunchStateFiles(directory: directory)
        let first = try storage.beginLaunch()
        _ = try storage.markCleanExit(of: first)
        // What an older version left: the record alone.
        #expect(!FileManager.default.fileExists(atPath: directory + "/launch-state.json.previous"))
        let found = try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8)

        let second = try storage.beginLaunch()
        #expect(second.launchCount == 2)
        #expect(try String(contentsOfFile: directory + "/launch-state.json.previous", encoding: .utf8) == found)
        // The power goes before the second launch's record reaches the disk: the installation goes on.
        try Data().write(to: URL(fileURLWithPath: directory + "/launch-state.json"))
        let third = try storage.beginLaunch()
        #expect(third.installationID == first.installationID)
        #expect(third.launchCount == 2)
    }
}
