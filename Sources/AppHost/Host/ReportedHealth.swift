import Synchronization

/// What one service instance last said about its own health (`ApplicationHandle.reportUnhealthy(_:)`),
/// for the host's loop to read when nudged: nil while it says it is healthy.
final class ReportedHealth: Sendable {
    private let problem = Mutex<String?>(nil)

    /// Stores `new`; false when it was already so.
    func set(_ new: String?) -> Bool {
        problem.withLock { problem in
            defer { problem = new }
            return problem != new
        }
    }

    var current: String? { problem.withLock { $0 } }
}
