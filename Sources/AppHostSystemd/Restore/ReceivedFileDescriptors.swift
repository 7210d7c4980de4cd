import AppHost
import SystemPackage

/// The fds systemd handed this process at start (`$LISTEN_FDS`, named by `$LISTEN_FDNAMES`):
/// where the fd store's entries come back after a restart.
///
/// It owns them: reading the state closes every one, and a value dropped unread closes them too,
/// so no stored memfd stays open for the daemon's life. The daemon's C prelude takes them out of
/// the environment and marks them close-on-exec before any thread starts; the daemon hands what
/// it found to `init(listenFDCount:names:)`, tests their own fds to `init(descriptors:names:)`.
public struct ReceivedFileDescriptors: ~Copyable, Sendable {
    /// systemd's `SD_LISTEN_FDS_START`: the first passed fd.
    public static let firstListenFD: Int32 = 3

    let descriptors: [FileDescriptor]
    let names: [String]

    /// Takes `descriptors`, named by `names` in order; an fd without a name is `unknown`, as
    /// `sd_listen_fds_with_names` calls it.
    public init(descriptors: [Int32], names: [String]) {
        self.descriptors = descriptors.map(FileDescriptor.init(rawValue:))
        self.names = descriptors.indices.map { $0 < names.count ? names[$0] : "unknown" }
    }

    /// The fds as the daemon's prelude found them: `count` fds from fd 3 on, `names` the
    /// `$LISTEN_FDNAMES` that came with them (`:`-separated; nil when unset).
    public init(listenFDCount count: Int, names: String?) {
        self.init(listenFDCount: count, names: names, startingAt: Self.firstListenFD)
    }

    /// `init(listenFDCount:names:)` with fds from `first` on.
    init(listenFDCount count: Int, names: String?, startingAt first: Int32) {
        let descriptors = (0..<Swift.max(count, 0)).map { first + Int32($0) }
        self.init(descriptors: descriptors, names: names.map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? [])
    }

    /// None: not started by systemd, or the store was empty.
    public init() {
        self.init(descriptors: [], names: [])
    }

    /// How many fds were received.
    public var count: Int { descriptors.count }

    deinit {
        for descriptor in descriptors { try? descriptor.close() }
    }

    /// The newest usable state among the fds named `name`, then closes every fd. Each fd of
    /// another name, and each one refused (not a sealed regular file, too large, damaged, a
    /// newer format), is described through `warning`; nothing here waits on an fd or traps.
    public consuming func restorableState(named name: String, warning: (String) -> Void) -> RestorableState? {
        var newest: RestorableState?
        for (descriptor, fdName) in zip(descriptors, names) {
            let label = "fd \(descriptor.rawValue) (\"\(fdName)\") from systemd's fd store"
            guard fdName == name else {
                warning("\(label) is not \(name); closed it unread")
                continue
            }
            do {
                let state = try RestorableState(reading: descriptor, requiringSeals: true)
                if state.generation >= newest?.generation ?? 0 { newest = state }
            } catch {
                warning("restorable state in \(label) ignored: \(error)")
            }
        }
        return newest
    }
}
