import AppHost
import AppHostSupport
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
    /// Whether `$NOTIFY_SOCKET` was set: the pushes go through libsystemd
    /// (`sd_pid_notify_with_fds`), which reads the process's own.
    let hasNotifySocket: Bool
    /// The push's two datagrams, the same every time.
    let removeDatagram: String
    let storeDatagram: String
    /// `$FDSTORE` (systemd 254+): how many fds the unit's store holds; nil on older systemd,
    /// which does not say.
    let limit: Int?

    /// The store behind `environment`'s `$NOTIFY_SOCKET`, keeping its entry under `name`.
    /// - Precondition: `isValidName(name)`.
    public init(name: String = defaultName, environment: [String: String] = AppHostSupport.ProcessEnvironment.current) {
        precondition(Self.isValidName(name), "\"\(name)\" is not a valid FDNAME: printable ASCII without \":\", 1 to 255 characters")
        self.name = name
        self.limit = environment["FDSTORE"].flatMap { Int($0) }
        self.hasNotifySocket = environment["NOTIFY_SOCKET"].map { !$0.isEmpty } ?? false
        self.removeDatagram = SystemdNotifier.datagram([("FDSTOREREMOVE", "1"), ("FDNAME", name)])
        self.storeDatagram = SystemdNotifier.datagram([("FDSTORE", "1"), ("FDNAME", name), ("FDPOLL", "0")])
    }

    /// Whether `keep` reaches systemd: `$NOTIFY_SOCKET` is set to a usable address, and the
    /// store is not known to be off (`$FDSTORE=0` on systemd 254+).
    public var isEnabled: Bool { hasNotifySocket && limit != 0 }

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
            try Self.notify(removeDatagram)
        } catch {
            throw Failure(name: name, operation: "FDSTOREREMOVE", code: error.rawValue)
        }
        do {
            try Self.notify(storeDatagram, passing: memory)
        } catch {
            throw Failure(name: name, operation: "FDSTORE", code: error.rawValue)
        }
    }

    /// One datagram with `sd_pid_notify_with_fds`, carrying `descriptor` if given.
    /// - Throws: its errno; `ENOENT` when the process has no `$NOTIFY_SOCKET` after all.
    private static func notify(_ datagram: String, passing descriptor: FileDescriptor? = nil) throws(Errno) {
        var fd = descriptor?.rawValue ?? -1
        let result = sd_pid_notify_with_fds(0, 0, datagram, &fd, descriptor == nil ? 0 : 1)
        if result < 0 { throw Errno(rawValue: -result) }
        if result == 0 { throw Errno.noSuchFileOrDirectory }
    }

    /// What the daemon's start-up log says about the tier.
    public var summary: String {
        if !hasNotifySocket { return "off (no $NOTIFY_SOCKET)" }
        if limit == 0 { return "off ($FDSTORE=0: the unit has no FileDescriptorStoreMax=)" }
        return "systemd fd store, entry \(name)" + (limit.map { ", room for \($0)" } ?? "")
    }

    /// Why a copy did not reach the fd store.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The entry's name.
        public let name: String
        /// The step that failed: `memfd_create`, `write`, `F_ADD_SEALS`, `FDSTOREREMOVE` or
        /// `FDSTORE`.
        public let operation: String
        /// The errno value.
        public let code: Int32

        public var description: String {
            "fd store entry \(name): \(operation): \(SystemErrorText.describe(code))"
        }
    }
}
