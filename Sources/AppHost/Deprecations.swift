// Names and signatures of earlier releases, kept for one release so that code written against
// them still builds, with a warning that names the new one. Every deprecation of the module is
// here.

/// The handle every hook gets.
@available(*, deprecated, renamed: "ApplicationHandle")
public typealias HostedApplication = ApplicationHandle

/// Every problem of a configuration.
@available(*, deprecated, renamed: "InvalidConfiguration")
public typealias ConfigurationErrors = InvalidConfiguration

/// The name `ServiceSection` had until 0.x: it read as swift-service-lifecycle's
/// `ServiceGroupConfiguration.ServiceConfiguration`.
@available(*, deprecated, renamed: "ServiceSection")
public typealias ServiceConfiguration = ServiceSection
