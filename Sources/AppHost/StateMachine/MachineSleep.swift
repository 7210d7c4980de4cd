/// The machine the host runs on is about to sleep or to shut down (logind's `PrepareForSleep`,
/// `PrepareForShutdown`), and the host waits in the background for it to wake.
package struct MachineSleep: Sendable, Hashable {
    package typealias Kind = MachineSleepKind

    /// Where the host goes when the machine resumes: the state it had at the preparation,
    /// changed by each background or foreground request carried out since (a `SIGUSR1` during
    /// a sleep is not lost, and does not wake the services while the machine sleeps).
    package var stateAfter: ApplicationState
    /// The preparations not yet resumed: a sleep and a shutdown may overlap; the host resumes
    /// once none is left.
    package var kinds: Set<Kind>

    /// A sleep begun in `stateAfter` for `kind`.
    package init(returningTo stateAfter: ApplicationState, kinds: Set<Kind>) {
        self.stateAfter = stateAfter
        self.kinds = kinds
    }
}
