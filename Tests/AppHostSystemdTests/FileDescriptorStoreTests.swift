import AppHost
import AppHostTestSupport
import CAppHostShims
import Foundation
import Glibc
import Testing

@testable import AppHostSystemd

/// The pushes go through `sd_pid_notify_with_fds`, which reads the process's `$NOTIFY_SOCKET`:
/// the tests that receive them run the probe with a socket of their own.
@Suite struct FileDescriptorStoreTests {
    /// Keeps each state through the probe's store named `name`; returns what it printed.
    static func keep(_ states: [RestorableState], name: String = FileDescriptorStore.defaultName, environment: [String: String], in directory: TemporaryDirectory) throws -> [String] {
        let files = try states.enumerated().map { index, state in
            let path = directory.file("state-\(index)")
            try Data(state.encoded()).write(to: URL(fileURLWithPath: path))
            return path
        }
        return try SystemdProbe.lines(["fd-store", name] + files, environment: environment)
    }

    @Test func isOffWithoutNotifySocketAndKeepDoesNothing() throws {
        let store = FileDescriptorStore(environment: [:])
        #expect(!store.isEnabled)
        #expect(store.summary == "off (no $NOTIFY_SOCKET)")
        try store.keep(.sample(generation: 1))
    }

    @Test("systemd 254+ says FDSTORE=0 when the unit has no FileDescriptorStoreMax=: the tier is off and says why")
    func isOffWhenSystemdSaysTheStoreHoldsNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let off = FileDescriptorStore(environment: ["NOTIFY_SOCKET": receiver.notifySocket, "FDSTORE": "0"])
        #expect(!off.isEnabled)
        #expect(off.summary == "off ($FDSTORE=0: the unit has no FileDescriptorStoreMax=)")
        #expect(try Self.keep([.sample(generation: 1)], environment: ["NOTIFY_SOCKET": receiver.notifySocket, "FDSTORE": "0"], in: directory)
            == ["enabled=false summary=off ($FDSTORE=0: the unit has no FileDescriptorStoreMax=)", "kept"])
        let on = FileDescriptorStore(environment: ["NOTIFY_SOCKET": receiver.notifySocket, "FDSTORE": "1"])
        #expect(on.summary == "systemd fd store, entry apphost-state, room for 1")
        #expect(try Self.keep([.sample(generation: 2)], environment: ["NOTIFY_SOCKET": receiver.notifySocket, "FDSTORE": "1"], in: directory).last == "kept")
        #expect(receiver.receiveWithDescriptors()?.text == "FDSTOREREMOVE=1\nFDNAME=apphost-state", "the first datagram is the enabled store's, not the disabled one's")
    }

    @Test func namesFollowSystemdsFDNAMERules() {
        #expect(FileDescriptorStore.isValidName("apphost-state"))
        #expect(FileDescriptorStore.isValidName(String(repeating: "a", count: 255)))
        #expect(!FileDescriptorStore.isValidName(String(repeating: "a", count: 256)))
        #expect(!FileDescriptorStore.isValidName(""))
        #expect(!FileDescriptorStore.isValidName("apphost:state"))
        #expect(!FileDescriptorStore.isValidName("apphost\nstate"))
        #expect(!FileDescriptorStore.isValidName("état"))
        #expect(FileDescriptorStore.isValidName("with space~"))
    }

    @Test func keepRemovesTheOldEntryThenPushesASealedMemfd() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let store = FileDescriptorStore(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(store.isEnabled)
        #expect(store.summary == "systemd fd store, entry apphost-state")
        let state = RestorableState.sample(generation: 31)

        #expect(try Self.keep([state], environment: ["NOTIFY_SOCKET": receiver.notifySocket], in: directory) == ["enabled=true summary=systemd fd store, entry apphost-state", "kept"])

        let removal = try #require(receiver.receiveWithDescriptors())
        #expect(removal.text == "FDSTOREREMOVE=1\nFDNAME=apphost-state")
        #expect(removal.descriptors.isEmpty)
        let push = try #require(receiver.receiveWithDescriptors())
        #expect(push.text == "FDSTORE=1\nFDNAME=apphost-state\nFDPOLL=0")
        #expect(push.descriptors.count == 1)
        let memory = try #require(push.descriptors.first)
        #expect(apphost_seals(memory) == apphost_complete_seals())
        var status = stat()
        #expect(fstat(memory, &status) == 0 && status.st_mode & S_IFMT == S_IFREG)
        var warnings: [String] = []
        let kept = ReceivedFileDescriptors(descriptors: [memory], names: ["apphost-state"]).restorableState(named: "apphost-state") { warnings.append($0) }
        #expect(kept == state)
        #expect(warnings.isEmpty)
        #expect(!receiver.hasPending)
    }

    @Test func eachKeepReplacesTheEntryUnderItsOwnName() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let kept = try Self.keep((1...3).map { .sample(generation: UInt64($0)) }, name: "instance-b.state", environment: ["NOTIFY_SOCKET": receiver.notifySocket], in: directory)
        #expect(kept.dropFirst() == ["kept", "kept", "kept"])
        for generation in 1...3 {
            #expect(receiver.receiveWithDescriptors()?.text == "FDSTOREREMOVE=1\nFDNAME=instance-b.state")
            let push = try #require(receiver.receiveWithDescriptors())
            #expect(push.text == "FDSTORE=1\nFDNAME=instance-b.state\nFDPOLL=0")
            let state = ReceivedFileDescriptors(descriptors: push.descriptors, names: ["instance-b.state"]).restorableState(named: "instance-b.state") { _ in }
            #expect(state?.generation == UInt64(generation))
        }
    }

    @Test func aPushThatCannotReachSystemdThrowsNamingTheStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["NOTIFY_SOCKET": directory.file("nobody-listens")]
        #expect(FileDescriptorStore(environment: environment).isEnabled)
        #expect(try Self.keep([.sample(generation: 1)], environment: environment, in: directory).last
            == "error: fd store entry apphost-state: FDSTOREREMOVE: No such file or directory (errno 2)")
    }
}
