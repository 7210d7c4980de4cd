import AppHost
import AppHostSystemd

/// How the last reload ended, kept in the state directory (`last-reload.json`) for
/// `apphostd reload`, which SIGHUPs the daemon and waits for the answer to its own request.
///
/// SIGHUPs coalesce, and an operator's `kill -HUP` can race the command: a reload answers every
/// request made before it was taken, so the command accepts the first record whose reload was
/// taken (`takenAt`, CLOCK_MONOTONIC) no earlier than it sent its signal.
struct ReloadRecord: Equatable, Sendable {
    /// When the daemon took the SIGHUP, in CLOCK_MONOTONIC microseconds.
    let takenAt: UInt64
    /// Whether the new configuration runs now.
    let isApplied: Bool
    /// Why it was refused (the configuration's problems), or what was applied.
    let message: String

    static let fileName = "last-reload.json"

    static func path(in stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// Writes the record atomically; a reload goes on when it cannot (the caller logs why).
    func write(to stateDirectory: String) throws(AtomicFile.Failure) {
        let json = JSONValue.object([
            "taken_monotonic_usec": .number(Double(takenAt)),
            "applied": .bool(isApplied),
            "message": .string(message),
        ])
        try AtomicFile.write(Array(json.rendered().utf8), to: Self.path(in: stateDirectory), syncingDirectory: false)
    }

    /// The record in `stateDirectory`; nil when there is none or it is not one.
    static func read(from stateDirectory: String) -> ReloadRecord? {
        guard let bytes = try? AtomicFile.read(path(in: stateDirectory)),
            let json = try? JSONValue(parsing: bytes),
            let taken = json["taken_monotonic_usec"]?.integer, taken >= 0,
            let applied = json["applied"]?.bool,
            let message = json["message"]?.string
        else { return nil }
        return ReloadRecord(takenAt: UInt64(taken), isApplied: applied, message: message)
    }
}
