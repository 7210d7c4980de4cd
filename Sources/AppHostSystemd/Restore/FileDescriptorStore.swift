import AppHost
import CSystemd
import SystemPackage

/// The fast tier of `RestorableStateFiles`: the state in systemd's fd store, one sealed memfd
/// under one name. It costs no disk write and survives a crash, SIGKILL, a watchdog restart and
/// `systemctl restart`, but not a stop and a start nor a reboot (the disk tier covers those).
///
/// The unit must allow the store (`FileDescriptorStoreMax=1` or more): systemd 252 accepts the
/// push either way, so a unit without it keeps nothing and no error says so. Without
/// `$NOTIFY_SOCKET` (not run by systemd) the tier is off and `keep` does nothing.
public struct FileDescriptorStore: Sendable {
    /// The entry's name when none is given.
    public static let defaultName = "apphost-state"

    /// The entry's name (`FDNAME=`): how `$LISTEN_FDNAMES` calls it at the next start.
    public let name: String
    /// How the pushes leave the process.
    let transport: Transport
    /// Why there is no socket although `$NOTIFY_SOCKET` is a path (`socket(2)` failed).
    let socketFailure: Errno?
    /// The push's two datagrams, the same every time.
    let removeDatagram: [UInt8]
    let storeDatagram: [UInt8]
    /// `$FDSTORE` (systemd 254+): how many fds the unit's store holds; nil on older systemd,
    /// which does not say.
    let limit: Int?

    /// The store behind `environment`'s `$NOTIFY_SOCKET`, keeping its entry under `name`.
    /// - Precondition: `isValidName(name)`.
    public init(name: String = defaultName, environment: [String: String] = ProcessEnvironment.current) {
        precondition(Self.isValidName(name), "\"\(name)\" is not a valid FDNAME: printable ASCII without \":\", 1 to 255 characters")
        self.name = name
        self.limit = environment["FDSTORE"].flatMap { Int($0) }
        var transport = Transport.off
        var failure: Errno?
        if let value = environment["NOTIFY_SOCKET"], !value.isEmpty {
            transport = .libsystemd
            if value.hasPrefix("/"), let address = NotifySocketAddress(value) {
                do {
                    transport = .socket(try NotifyDatagramSocket(address: address))
                } catch {
                    failure = error
                }
            }
        }
        self.transport = transport
        self.socketFailure = failure
        self.removeDatagram = Array(SystemdNotifier.datagram([("FDSTOREREMOVE", "1"), ("FDNAME", name)]).utf8)
        self.storeDatagram = Array(SystemdNotifier.datagram([("FDSTORE", "1"), ("FDNAME", name), ("FDPOLL", "0")]).utf8)
    }

    /// Whether `keep` reaches systemd: `$NOTIFY_SOCKET` is set to a usable address, and the
    /// store is not known to be off (`$FDSTORE=0` on systemd 254+).
    public var isEnabled: Bool { (!transport.isOff || socketFailure != nil) && limit != 0 }

    /// Whether systemd takes `name` as an `FDNAME=`: printable ASCII without `:` (the separator
    /// of `$LISTEN_FDNAMES`), 1 to 255 characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
    }

    /// Replaces the entry with `state`: a memfd sealed against any change, pushed with
    /// `FDSTOREREMOVE=1` then `FDSTORE=1` (`FDPOLL=0`: systemd must not watch a memfd for
    /// hang-ups), as systemd's own daemons do: two datagrams, because systemd 252 given both in
    /// one keeps nothing (measured under PID 1). Fast enough for the host's loop: no disk is
    /// touched. Does nothing when the tier is off.
    /// - Throws: `Failure` naming the step that failed; the previous entry may be gone then.
    public func keep(_ state: RestorableState) throws(Failure) {
        guard isEnabled else { return }
        if let socketFailure { throw Failure(name: name, operation: "socket", code: socketFailure.rawValue) }
        let memory: FileDescriptor
        do {
            memory = try FileDescriptor.sealableMemoryFile(named: name)
        } catch {
            throw Failure(name: name, operation: "memfd_create", code: error.rawValue)
        }
        defer { try? memory.close() }
        do {
            try memory.writeAll(state.encoded())
        } catch {
            throw Failure(name: name, operation: "write", code: (error as? Errno ?? .ioError).rawValue)
        }
        do {
            try memory.addSeals(FileDescriptor.completeSeals)
        } catch {
            throw Failure(name: name, operation: "F_ADD_SEALS", code: error.rawValue)
        }
        do {
            try transport.send(removeDatagram)
        } catch {
            throw Failure(name: name, operation: "FDSTOREREMOVE", code: error.rawValue)
        }
        do {
            try transport.send(storeDatagram, passing: memory)
        } catch {
            throw Failure(name: name, operation: "FDSTORE", code: error.rawValue)
        }
    }

    /// How a push reaches systemd. The pushes are on a request's path (before its `STATUS=`):
    /// `sd_pid_notify_with_fds` opens, tunes and closes a socket for every datagram (about
    /// 110 µs for a push's two, measured here, against 35 µs through one socket opened once), so
    /// a path `$NOTIFY_SOCKET` gets a socket of its own; any other address goes through libsystemd.
    enum Transport: Sendable {
        /// No `$NOTIFY_SOCKET`.
        case off
        /// One socket, opened once, to the path.
        case socket(NotifyDatagramSocket)
        /// `sd_pid_notify_with_fds`, which reads the process's `$NOTIFY_SOCKET`.
        case libsystemd

        var isOff: Bool {
            if case .off = self { return true }
            return false
        }

        /// Sends one datagram, carrying `descriptor` if given.
        /// - Throws: the errno of the send.
        func send(_ datagram: [UInt8], passing descriptor: FileDescriptor? = nil) throws(Errno) {
            switch self {
            case .off:
                return
            case .socket(let socket):
                try socket.send(datagram, passing: descriptor)
            case .libsystemd:
                var fd = descriptor?.rawValue ?? -1
                let text = String(decoding: datagram, as: UTF8.self)
                let result = sd_pid_notify_with_fds(0, 0, text, &fd, descriptor == nil ? 0 : 1)
                if result < 0 { throw Errno(rawValue: -result) }
                if result == 0 { throw Errno.noSuchFileOrDirectory }
            }
        }
    }

    /// What the daemon's start-up log says about the tier.
    public var summary: String {
        if transport.isOff, socketFailure == nil { return "off (no $NOTIFY_SOCKET)" }
        if limit == 0 { return "off ($FDSTORE=0: the unit has no FileDescriptorStoreMax=)" }
        return "systemd fd store, entry \(name)" + (limit.map { ", room for \($0)" } ?? "")
    }

    /// Why a copy did not reach the fd store.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The entry's name.
        public let name: String
        /// The step that failed: `socket`, `memfd_create`, `write`, `F_ADD_SEALS`,
        /// `FDSTOREREMOVE` or `FDSTORE`.
        public let operation: String
        /// The errno value.
        public let code: Int32

        public var description: String {
            "fd store entry \(name): \(operation): \(SystemErrorText.describe(code))"
        }
    }
}
