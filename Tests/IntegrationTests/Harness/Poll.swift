import Foundation

/// Bounded polling for state held by another process (a file, systemd, the journal), where no
/// in-process event exists to await.
enum Poll {
    /// Calls `condition` every `interval` until it returns true or `timeout` passes.
    /// - Returns: whether the condition became true in time.
    static func until(timeout: Duration, interval: Duration = .milliseconds(50), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if try await condition() { return true }
            if clock.now >= deadline { return false }
            try? await Task.sleep(for: interval)
        }
    }
}
