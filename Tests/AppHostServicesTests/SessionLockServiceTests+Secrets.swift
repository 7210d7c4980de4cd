@testable import AppHostServices
import AppHost
import Foundation
import Logging
import Synchronization
import AppHostTestSupport
import AppHostTestKit
import Testing

// Where the secret comes from and what is refused: a file readable by others, a FIFO, an oversized
// file, another owner; systemd's credentials; and the wipe of the bytes.
extension SessionLockServiceTests {
    @Test func aSecretFileReadableByOthersIsRefused() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("too-open", to: path, mode: 0o644)
        let service = try lockService(["secret-file": .string(path)])
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "session-lock", service: service)], logs: logs) { host in
            let refusal = await logs.first { $0.level == .error && $0.message.contains("chmod 600 \(path)") }
            #expect(refusal?.message.contains("0644") == true)
            #expect(!service.hasSecret)
            #expect(service.isLocked)
        }
        #expect(!logs.all.contains { $0.message.contains("too-open") })
    }

    @Test("a secret-file that is a FIFO is refused at once, at launch and at a later unlock, and stop is not held up")
    func aFIFOSecretIsRefusedWithoutBlocking() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        #expect(mkfifo(path, 0o600) == 0)
        let refused = await completes(within: .seconds(5)) {
            do {
                _ = try SessionSecret.read(from: path)
                Issue.record("a FIFO was read as a secret")
            } catch let error as SecretUnavailable {
                #expect(error.problem == "is not a regular file (a FIFO)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        #expect(refused, "reading a FIFO secret blocked")

        // Swapped in while running: background with a good file, then the FIFO, then foreground.
        unlink(path)
        try writeSecret("good", to: path, mode: 0o600)
        let service = try lockService(["secret-file": .string(path)])
        let logs = CapturedLogs()
        let finished = await completes(within: .seconds(10)) {
            do {
                try await withRunningHost([ServiceDescriptor(name: "session-lock", service: service)], logs: logs) { host in
                    try await host.enterBackground()
                    unlink(path)
                    #expect(mkfifo(path, 0o600) == 0)
                    try await host.enterForeground()
                    let refusal = await logs.first { $0.level == .error && $0.message.contains("is not a regular file (a FIFO)") }
                    #expect(refusal != nil)
                    #expect(service.isLocked)
                }
            } catch {
                Issue.record("the host's run or a request threw: \(error)")
            }
        }
        #expect(finished, "the host did not stop: the FIFO blocked the service")
    }

    @Test("a secret-file larger than 64 KiB is refused without being read into memory")
    func anOversizedSecretIsRefused() throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret(String(repeating: "x", count: SessionSecret.sizeLimit + 1), to: path, mode: 0o600)
        do {
            _ = try SessionSecret.read(from: path)
            Issue.record("a \(SessionSecret.sizeLimit + 1)-byte secret was read")
        } catch {
            #expect(error.problem == "is 65537 bytes, more than the 64 KiB a secret may be")
        }
        try writeSecret(String(repeating: "x", count: SessionSecret.sizeLimit), to: path, mode: 0o600)
        #expect(throws: Never.self) { _ = try SessionSecret.read(from: path) }
    }

    @Test("a secret-file owned by another user is refused", .enabled(if: geteuid() == 0, "needs root to chown a file to another user"))
    func aSecretOwnedBySomeoneElseIsRefused() throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("theirs", to: path, mode: 0o600)
        #expect(chown(path, 4242, 4242) == 0)
        #expect(throws: SecretUnavailable.self) { _ = try SessionSecret.read(from: path) }
        do {
            _ = try SessionSecret.read(from: path)
        } catch {
            #expect(error.problem.contains("is owned by uid 4242"))
        }
    }

    @Test("a credential may be readable by the unit's group, as systemd 255+ makes it (0440); a secret-file may not, and neither may be writable by the group or readable by others")
    func credentialsMayBeGroupReadable() throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeSecret("from-systemd-257", to: directory + "/session-secret", mode: 0o440)
        let credential = SecretSource.credential("session-secret")
        #expect(try credential.load { $0 == "CREDENTIALS_DIRECTORY" ? directory : nil }?.count == "from-systemd-257".utf8.count)
        #expect(throws: SecretUnavailable.self) { _ = try SecretSource.file(directory + "/session-secret").load { _ in nil } }
        for mode in [0o460, 0o444] {
            try writeSecret("loose", to: directory + "/session-secret", mode: mode)
            #expect(throws: SecretUnavailable.self, "mode \(String(mode, radix: 8))") { _ = try credential.load { $0 == "CREDENTIALS_DIRECTORY" ? directory : nil } }
        }
    }

    @Test func credentialsComeFromTheCredentialsDirectory() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        try writeSecret("from-systemd", to: directory + "/session-secret", mode: 0o400)
        let service = try lockService(["credential": .string("session-secret")], environment: ["CREDENTIALS_DIRECTORY": directory])
        try await withRunningHost([
            ServiceDescriptor(name: "recorder", service: IdleService()),
            ServiceDescriptor(name: "session-lock", service: service),
        ]) { host in
            #expect(service.hasSecret)
            try await host.enterBackground()
            #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataWillBecomeUnavailable) } != nil)
            try await host.enterForeground()
            #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataDidBecomeAvailable) } != nil)
            #expect(service.hasSecret)
        }

        let missing = try lockService(["credential": .string("session-secret")], environment: [:])
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "session-lock", service: missing)], logs: logs) { _ in
            let error = await logs.first { $0.level == .error }
            #expect(error?.message.contains("LoadCredential=session-secret:") == true)
        }
    }

    @Test func wipingOverwritesTheBytes() throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: Array("0123456789abcdef".utf8))
        SessionSecret.zero(buffer)
        #expect(buffer.allSatisfy { $0 == 0 })

        let directory = try makeTemporaryDirectory("apphost-session")
        try writeSecret("sixteen-bytes-ok", to: directory + "/secret")
        let secret = try SessionSecret.read(from: directory + "/secret")
        #expect(secret.count == 16)
        secret.wipe()
        #expect(secret.count == 0)
    }
}
