import AppHost
import AppHostTestKit
import Foundation
import Testing

// What the session-lock and notification tests share.

/// A `TestHost` over `services` that has launched, with captured logs.
func withRunningHost(
    _ services: [ServiceDescriptor],
    logs: CapturedLogs = CapturedLogs(),
    _ body: (TestHost) async throws -> Void
) async throws {
    try await withTestHost(services, configuration: .init(), logs: logs) { host in
        try await host.launched()
        try await body(host)
    }
}

/// Writes `content` to `path` with `mode`.
func writeSecret(_ content: String, to path: String, mode: Int = 0o600) throws {
    #expect(FileManager.default.createFile(atPath: path, contents: Data(content.utf8), attributes: [.posixPermissions: mode]))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}
