import AppHostSupport
/// The edge's event loop could not start: its wake-up eventfd, its sd-event loop or its thread.
/// Whoever starts one says what it was for (the signal reader, the memory-pressure watcher,
/// the bus): this error says what failed, not what for.
package struct EdgeEventLoopError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed (`eventfd`, `sd_event_new`, `pthread_create`).
    package let operation: String
    /// The errno.
    package let code: Int32

    package var description: String { "could not start the edge's event loop: \(operation): \(SystemErrorText.describe(code))" }
}
