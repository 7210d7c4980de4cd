import AppHost

/// A service whose hooks do nothing: a place in the host's service list whose calls a
/// `TestHost` records (`host.calls`), or a host's one service where only the host is tested.
public struct IdleService: ApplicationService {
    public init() {}
}
