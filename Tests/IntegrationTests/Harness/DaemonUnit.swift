import Foundation

/// The unit the scenarios install: the user-manager-compatible part of `deploy/apphostd.service`.
///
/// A user manager cannot apply `DynamicUser=`, most `Protect*=`, `CapabilityBoundingSet=`,
/// `StateDirectory=` of the system, `LoadCredential=` and the like, so only the settings that shape
/// the daemon's contract with systemd are taken from the shipped unit (when it exists): its type,
/// notify access, reload command and kill signal. `ExecStart=`, timeouts, restart policy and the
/// environment are the test's own.
struct DaemonUnit: Sendable {
    /// The apphostd executable.
    var binary: String
    /// The config file passed with `--config`.
    var configPath: String
    /// `TimeoutStartSec=`.
    var timeoutStartSec = "20s"
    /// `TimeoutStopSec=`.
    var timeoutStopSec = "20s"
    /// `WatchdogSec=`, off unless a test asks.
    var watchdogSec: String?
    /// `Restart=` (the watchdog scenarios use `on-watchdog`).
    var restart = "no"
    /// Further `[Service]` lines, such as `RestartSec=100ms` or `LimitCORE=0`.
    var extraServiceLines: [String] = []
    /// `Environment=` entries.
    var environment: [String: String] = [:]
    /// Where `ExecStopPost=` writes `$SERVICE_RESULT $EXIT_CODE $EXIT_STATUS` after each run. systemd
    /// unloads an inactive unit that ended well, so `systemctl show` cannot tell a clean exit(0)
    /// from death by SIGTERM (both are `Result=success`); this file can.
    var exitRecordPath: String?

    /// Settings taken from the shipped unit when present (else these defaults).
    static let sharedKeys = ["Type", "NotifyAccess", "BusName", "ExecReload", "KillSignal", "FileDescriptorStoreMax", "UMask", "NoNewPrivileges"]

    /// The shipped unit file, found relative to this source file.
    static let shippedUnitPath: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/apphostd.service").path

    /// `sharedKeys` as set in the shipped unit's `[Service]` section (last assignment wins).
    static func shippedSettings(path: String = shippedUnitPath) -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var section = ""
        var settings: [String: String] = [:]
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("[") { section = line; continue }
            guard section == "[Service]", let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]).trimmingCharacters(in: .whitespaces)
            if sharedKeys.contains(key) { settings[key] = String(line[line.index(after: equals)...]).trimmingCharacters(in: .whitespaces) }
        }
        return settings
    }

    /// The unit file text.
    func text() -> String {
        var shared = [
            "Type": "notify",
            "NotifyAccess": "main",
            "ExecReload": "/bin/kill -HUP $MAINPID",
            "KillSignal": "SIGTERM",
        ]
        shared.merge(Self.shippedSettings()) { _, shipped in shipped }
        // The shipped command lines name the installed binary and config; these are the test's.
        shared["ExecReload"] = shared["ExecReload"]?
            .replacingOccurrences(of: "/usr/local/bin/apphostd", with: binary)
            .replacingOccurrences(of: "/etc/apphostd/apphostd.yaml", with: configPath)
        var lines = [
            "[Unit]",
            "Description=apphostd under test (user-manager version of deploy/apphostd.service)",
            "",
            "[Service]",
        ]
        for key in Self.sharedKeys { if let value = shared[key] { lines.append("\(key)=\(value)") } }
        lines.append("ExecStart=\(binary) run --config \(configPath)")
        lines.append("TimeoutStartSec=\(timeoutStartSec)")
        lines.append("TimeoutStopSec=\(timeoutStopSec)")
        if let watchdogSec { lines.append("WatchdogSec=\(watchdogSec)") }
        if let exitRecordPath {
            lines.append("ExecStopPost=/bin/sh -c 'echo \"$$SERVICE_RESULT $$EXIT_CODE $$EXIT_STATUS\" >> \(exitRecordPath)'")
        }
        lines.append("Restart=\(restart)")
        lines += extraServiceLines
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) {
            lines.append("Environment=\"\(key)=\(value)\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
