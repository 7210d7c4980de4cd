import AppHost

extension LaunchOptions {
    /// Launch options for a test's first launch: no launch before, no previous exit.
    public static func testing(installationID: InstallationID = InstallationID()) -> LaunchOptions {
        LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: installationID, previousExit: .none)
    }

    /// Launch options for a test's `launchCount`-th launch (a restore after the first) after a
    /// previous run that ended `previousExit`, for `previousExitCause` if given.
    public static func testing(
        launchCount: Int,
        previousExit: PreviousExit,
        previousExitCause: ExitCause? = nil,
        installationID: InstallationID = InstallationID()
    ) -> LaunchOptions {
        LaunchOptions(
            kind: launchCount <= 1 ? .firstLaunch : .restore,
            launchCount: launchCount,
            installationID: installationID,
            previousExit: previousExit,
            previousExitCause: previousExitCause
        )
    }
}
