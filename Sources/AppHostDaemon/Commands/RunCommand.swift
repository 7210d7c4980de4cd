import Dispatch

/// `apphostd run`: the daemon.
struct RunCommand {
    /// `--config`, if given.
    let config: String?

    /// Runs the daemon until it is terminated; returns its exit status.
    func run() -> ExitStatus {
        let daemon = Daemon(configPath: ApphostdCommand.resolveConfigPath(config), registry: ApphostdCommand.registry(), identity: ApphostdCommand.identity())
        let status = ExitStatusBox()
        let finished = DispatchSemaphore(value: 0)
        // The one unstructured task: the bridge from the synchronous entry (see `ApphostdCommand`) to
        // the daemon's structured task tree. The main thread waits for it with signals blocked.
        // At `.medium`: started from the main thread, a task would be `.high` on Linux, and
        // libdispatch would give the worker threads running it nice -2, which a daemon without
        // CAP_SYS_NICE may not take (each refusal is a line in the journal).
        Task(priority: .medium) {
            status.value = await daemon.run()
            finished.signal()
        }
        finished.wait()
        return status.value
    }
}

/// Carries the daemon's exit status from the task to the waiting main thread; the semaphore
/// orders the write before the read.
private final class ExitStatusBox: @unchecked Sendable {
    var value = ExitStatus.clean
}
