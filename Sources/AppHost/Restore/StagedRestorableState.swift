import Synchronization

/// The bytes one service instance handed to `keepRestorableState(_:)` that the host's loop has
/// not taken yet. One per instance, so keeping state hashes no name and waits on no other
/// service; `HostOutlet.hasStagedRestorableState` tells the loop that some instance has bytes.
final class StagedRestorableState: Sendable {
    private let bytes = Mutex<[UInt8]?>(nil)

    func stage(_ new: [UInt8]) {
        bytes.withLock { $0 = new }
    }

    /// The staged bytes, leaving none.
    func take() -> [UInt8]? {
        bytes.withLock { $0.take() }
    }
}
