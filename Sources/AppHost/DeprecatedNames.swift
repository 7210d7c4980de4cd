// Names of the previous release, kept for one release so that code written against it still
// builds (with a warning that names the new one).

/// The handle every hook gets.
@available(*, deprecated, renamed: "ApplicationHandle")
public typealias HostedApplication = ApplicationHandle

/// Every problem of a configuration.
@available(*, deprecated, renamed: "InvalidConfiguration")
public typealias ConfigurationErrors = InvalidConfiguration
