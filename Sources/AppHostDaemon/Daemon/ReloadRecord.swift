import AppHost
import AppHostSupport
import AppHostSystemd

/// How the last reload ended, kept in the state directory (`last-reload.json`) for
/// `apphostd reload`, which SIGHUPs the daemon and waits for the answer to its own request.
///
/// SIGHUPs coalesce, and an operator's `kill -HUP` can race the command: a reload answers every
/// request made before it was taken, so the command accepts the first record of this boot whose
/// reload was taken (`takenAt`, CLOCK_MONOTONIC, which restarts at boot) no earlier than it sent
/// its signal.
package struct ReloadRecord: Equatable, Sendable {
    /// How the reload ended.
    package enum Outcome: String, Sendable {
        /// The new configuration runs now.
        case applied
        /// The new configuration was refused; the running one stays.
        case refused
        /// The daemon did not reload at all: it was terminating.
        case notApplied = "not-applied"
    }

    /// The boot the record was written in (`/proc/sys/kernel/random/boot_id`).
    let bootID: String
    /// When the daemon took the SIGHUP, in CLOCK_MONOTONIC microseconds.
    let takenAt: UInt64
    let outcome: Outcome
    /// What was applied, or why not (the configuration's problems).
    let message: String

    static let fileName = "last-reload.json"

    static func path(in stateDirectory: String) -> String { stateDirectory + "/" + fileName }

    /// This boot's id; empty when the kernel does not say.
    static let currentBootID: String = {
        guard let bytes = try? AtomicFile.read("/proc/sys/kernel/random/boot_id") else { return "" }
        return String(decoding: bytes.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }()

    /// The record as `last-reload.json` holds it.
    package var json: JSONValue {
        .object([
            "boot_id": .string(bootID),
            "taken_monotonic_usec": .number(Double(takenAt)),
            "outcome": .string(outcome.rawValue),
            "message": .string(message),
        ])
    }

    /// Writes the record atomically.
    func write(to stateDirectory: String) throws(AtomicFile.Failure) {
        try AtomicFile.write(Array(json.rendered().utf8), to: Self.path(in: stateDirectory), syncingDirectory: false)
    }

    /// The record in `stateDirectory`; nil when there is none or it is not one.
    static func read(from stateDirectory: String) -> ReloadRecord? {
        guard let bytes = try? AtomicFile.read(path(in: stateDirectory)) else { return nil }
        return ReloadRecord(json: bytes)
    }

    /// Whether this record answers a SIGHUP sent at `sentAt` in this boot.
    func answers(sentAt: UInt64) -> Bool {
        bootID == Self.currentBootID && takenAt >= sentAt
    }
}

extension ReloadRecord {
    /// Reads what `json` writes; nil for anything else (the command then keeps waiting).
    package init?(json bytes: [UInt8]) {
        guard let json = try? JSONValue(parsing: bytes),
            let bootID = json["boot_id"]?.string,
            let taken = json["taken_monotonic_usec"]?.integer, taken >= 0,
            let outcome = json["outcome"]?.string.flatMap(Outcome.init(rawValue:)),
            let message = json["message"]?.string
        else { return nil }
        self.init(bootID: bootID, takenAt: UInt64(taken), outcome: outcome, message: message)
    }
}
