extension PluggableApplicationHost {
    /// Restarts one service as an operator asks (`apphostd restart NAME`): the whole service,
    /// whatever its `RestartPolicy.Scope`, the way a reload restarts one
    /// (`applicationWillTerminate`, a new instance with its restorable state, its launch hooks,
    /// the events that bring it to the host's state), in its place in the order. A failed or
    /// disabled service comes back this way, and its count of recent restarts starts over.
    /// Waits for the requests before it; a composite's children are named by their path
    /// (`notify/desktop`).
    public func restartService(named name: String) async throws(ServiceRestartError) {
        try await send { .restartService(name: name, reply: $0) }.get()
    }
}
