import Testing

/// The parent of every integration suite: one systemd sandbox at a time, so the timing-sensitive
/// scenarios (start timeouts, signal storms) do not compete with each other for two CPUs.
@Suite(.serialized)
enum IntegrationSuites {}
