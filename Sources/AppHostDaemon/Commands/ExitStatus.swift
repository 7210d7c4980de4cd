/// The exit codes apphostd documents (sysexits.h where one fits).
enum ExitStatus: Int32, Sendable, Error, CaseIterable {
    /// Terminated cleanly, or a command did what it was asked.
    case clean = 0
    /// A required service failed to launch, or the daemon could not set itself up.
    case launchFailed = 1
    /// The command line is wrong (sysexits.h EX_USAGE): the message says what to change.
    /// `record-exit` also says so when systemd's variables are not set: it was not run from
    /// `ExecStopPost=`.
    case usage = 64
    /// Input that is not what it should be (sysexits.h EX_DATAERR): `record-exit` given values
    /// systemd never writes. Nothing was recorded.
    case badInput = 65
    /// One of the daemon's own services failed, and with it the service group (sysexits.h
    /// EX_SOFTWARE): the journal's error line names it. `Restart=on-failure` restarts the unit.
    case software = 70
    /// No daemon answers on the bus (sysexits.h EX_UNAVAILABLE): `status` and `restart` say
    /// which bus and name they tried.
    case unavailable = 69
    /// A file could not be written (sysexits.h EX_CANTCREAT): the message names it.
    case cannotWrite = 73
    /// The state directory belongs to another running daemon (sysexits.h EX_TEMPFAIL): it may
    /// be free after that one stops.
    case stateDirectoryInUse = 75
    /// The daemon refused the caller (sysexits.h EX_NOPERM): `restart` from an unprivileged
    /// user on the system bus.
    case permissionDenied = 77
    /// The configuration is invalid (sysexits.h EX_CONFIG); systemd should not restart.
    case badConfiguration = 78
}
