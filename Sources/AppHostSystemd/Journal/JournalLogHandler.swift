import AppHostSupport
import Glibc
import Logging
import Synchronization

/// A swift-log handler for a systemd service: journald's native protocol when stderr is the
/// journal, plain `<N>message key=value` lines on stderr otherwise.
///
/// The native protocol keeps metadata as separate, queryable fields (`journalctl SERVICE=analytics`);
/// the `<N>` prefix lets journald (or anything reading stderr) recover the priority of plain lines.
/// Unless a logger sets its own level, the handler follows `LogLevelControl.shared`, so a reload can
/// change the level of every existing logger.
public struct JournalLogHandler: LogHandler {
    /// Where records go, decided once per handler.
    enum Destination: Sendable, Equatable {
        /// journald's native protocol (`sd_journal_sendv`); falls back to a plain line on `fd` if
        /// journald refuses.
        case journal(fallbackFD: Int32)
        /// Plain lines written to `fd`: with the `<N>` priority prefix that journald and syslog
        /// read, or, for a person at a terminal, with the level spelled out when it matters.
        case plain(fd: Int32, prefixed: Bool)
    }

    /// The logger label, sent as `LOGGER=`.
    public let label: String
    /// `SYSLOG_IDENTIFIER=`, the name `journalctl -t` filters on.
    public let identifier: String
    /// Metadata attached to every record of this logger.
    public var metadata: Logger.Metadata = [:]
    /// Contextual metadata (task-locals, say) added to every record.
    public var metadataProvider: Logger.MetadataProvider?

    let destination: Destination
    let levelControl: LogLevelControl
    private var ownLevel: Logger.Level?

    /// A handler writing to stderr; native journald when `$JOURNAL_STREAM` names stderr.
    public init(
        label: String,
        identifier: String = "apphostd",
        environment: [String: String] = AppHostSupport.ProcessEnvironment.current
    ) {
        self.init(label: label, identifier: identifier, environment: environment,
                  outputFD: STDERR_FILENO, levelControl: .shared, metadataProvider: nil)
    }

    /// The full initializer: `outputFD` stands in for stderr (tests use a pipe).
    init(
        label: String,
        identifier: String,
        environment: [String: String],
        outputFD: Int32,
        levelControl: LogLevelControl,
        metadataProvider: Logger.MetadataProvider?
    ) {
        self.label = label
        self.identifier = identifier
        self.levelControl = levelControl
        self.metadataProvider = metadataProvider
        // systemd.exec(5)'s recipe: stderr that is the journal's stream (`$JOURNAL_STREAM`) means
        // journald listens, and the output may be upgraded to the native protocol, which
        // libsystemd speaks (`sd_journal_sendv`).
        self.destination = Self.isJournalStream(environment: environment, fd: outputFD)
            ? .journal(fallbackFD: outputFD)
            : .plain(fd: outputFD, prefixed: isatty(outputFD) == 0)
    }

    /// The stream the handler writes plain lines to (stderr).
    var outputFD: Int32 {
        switch destination {
        case .journal(let fd), .plain(let fd, _): fd
        }
    }

    /// Whether records go to journald natively (stderr is the journal stream).
    public var writesNativeJournal: Bool {
        if case .journal = destination { return true }
        return false
    }

    /// The logger's own level if one was set, else the shared live level.
    public var logLevel: Logger.Level {
        get { ownLevel ?? levelControl.level }
        set { ownLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let destination: Destination
        switch levelControl.target {
        case .auto: destination = self.destination
        case .null: return
        case .journal: destination = .journal(fallbackFD: outputFD)
        case .console: destination = .plain(fd: outputFD, prefixed: isatty(outputFD) == 0)
        }
        let merged = mergedMetadata(event.metadata)
        let errorText = event.error.map { String(describing: $0) }
        switch destination {
        case .journal(let fallbackFD):
            let fields = journalFields(
                level: event.level, message: event.message.description, metadata: merged,
                error: errorText, file: event.file, function: event.function, line: event.line)
            if Self.sendToJournal(fields) < 0 {
                Self.write(plainLine(level: event.level, message: event.message.description,
                                     metadata: merged, error: errorText, prefixed: true), to: fallbackFD)
            }
        case .plain(let fd, let prefixed):
            Self.write(plainLine(level: event.level, message: event.message.description,
                                 metadata: merged, error: errorText, prefixed: prefixed), to: fd)
        }
    }

    /// Sets up swift-log with this handler, once per process; later calls only change the level.
    /// `level` becomes `LogLevelControl.shared.level`.
    public static func bootstrap(
        identifier: String = "apphostd",
        level: Logger.Level,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        LogLevelControl.shared.level = level
        guard bootstrapped.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let environment = AppHostSupport.ProcessEnvironment.current
        LoggingSystem.bootstrap({ label, provider in
            JournalLogHandler(label: label, identifier: identifier, environment: environment,
                              outputFD: STDERR_FILENO, levelControl: .shared, metadataProvider: provider)
        }, metadataProvider: metadataProvider)
    }

    private static let bootstrapped = Atomic<Bool>(false)

    /// Handler metadata, then the provider's, then the call's own (later wins), like swift-log's handlers.
    func mergedMetadata(_ explicit: Logger.Metadata?) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let explicit {
            merged.merge(explicit) { _, new in new }
        }
        return merged
    }

    /// `$JOURNAL_STREAM` is "device:inode" of the journal's stream socket; stderr is the journal
    /// only when `fd` is that very socket (not a redirect inherited from a shell).
    package static func isJournalStream(environment: [String: String], fd: Int32) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// Writes one record with as few `write` calls as the kernel allows (one for pipes and sockets).
    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
