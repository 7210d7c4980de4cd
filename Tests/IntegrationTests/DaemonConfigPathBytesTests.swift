import AppHostTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// `--config` is the bytes given: a file name that is not UTF-8 opens, and shows escaped.
    @Suite(.enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)"))
    struct DaemonConfigPathBytesTests {
        /// Runs `apphostd check --config <bytes>` with raw argv bytes; returns status and output.
        static func check(_ binary: String, config: [UInt8], in directory: String) throws -> (status: Int32, output: String) {
            let outputPath = directory + "/output"
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let arguments: [[UInt8]] = [Array(binary.utf8), Array("check".utf8), Array("--config".utf8), config]
            let cStrings = arguments.map { bytes -> UnsafeMutablePointer<CChar> in
                let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
                for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
                pointer[bytes.count] = 0
                return pointer
            }
            defer { cStrings.forEach { $0.deallocate() } }
            var argv: [UnsafeMutablePointer<CChar>?] = cStrings + [nil]
            var pid = pid_t()
            guard posix_spawn(&pid, binary, &actions, nil, &argv, environ) == 0 else { throw HarnessError("posix_spawn \(binary) failed") }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            return ((status >> 8) & 0xFF, output)
        }

        @Test("apphostd check --config with a Latin-1 file name: the file opens; a missing one is named with the byte escaped")
        func nonUTF8ConfigPath() throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let directory = try makeTemporaryDirectory("apphostd-bytes")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let name: [UInt8] = Array("\(directory)/caf".utf8) + [0xE9] + Array(".yaml".utf8)
            let fd = (name + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o600) } }
            #expect(fd >= 0)
            _ = Array("host:\n  state-directory: \(directory)/state\nservices:\n  - logger\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)

            let found = try Self.check(binary, config: name, in: directory)
            #expect(found.status == 0, "\(found.output)")
            #expect(found.output.contains("OK: \(directory)/caf\\xe9.yaml: 1 service (logger)"), "\(found.output)")

            let missing = try Self.check(binary, config: Array("\(directory)/nope".utf8) + [0xE9], in: directory)
            #expect(missing.status == 78, "\(missing.output)")
            #expect(missing.output.contains("\(directory)/nope\\xe9: cannot open the config file: no such file (ENOENT)"), "\(missing.output)")
        }
    }
}
