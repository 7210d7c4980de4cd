import ArgumentParser

/// The exit codes apphostd documents.
enum ExitStatus {
    /// Terminated cleanly.
    static let clean = ExitCode(0)
    /// A required service failed to launch, or the daemon could not set itself up.
    static let launchFailed = ExitCode(1)
    /// The state directory belongs to another running daemon (sysexits.h EX_TEMPFAIL): it may
    /// be free after that one stops.
    static let stateDirectoryInUse = ExitCode(75)
    /// The configuration is invalid (sysexits.h EX_CONFIG); systemd should not restart.
    static let badConfiguration = ExitCode(78)
}
