/// The name `ServiceSection` had until 0.x: it read as swift-service-lifecycle's
/// `ServiceGroupConfiguration.ServiceConfiguration`. Kept for one release.
@available(*, deprecated, renamed: "ServiceSection")
public typealias ServiceConfiguration = ServiceSection
