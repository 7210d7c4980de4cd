import Logging

/// Stands in for a service whose factory threw, so the host can report why it is disabled.
struct UnbuildableService: ApplicationService {}
