import AppHost
import AppHostSupport

/// The services apphostd ships, by the name the config gives as `type`.
public enum BuiltinServices {
    /// A registry holding every built-in service; add your own types to it before running. The
    /// notification service's `desktop` sink sends through `desktopNotifications`
    /// (AppHostSystemd's `DesktopNotificationClient`); without one it says once that it is off.
    public static func registry(desktopNotifications: (any DesktopNotificationTransport)? = nil) -> ServiceRegistry {
        var registry = ServiceRegistry()
        registry.register(LoggerService.typeName, summary: LoggerService.summary, settingKeys: LoggerService.settingKeys) { try LoggerService(configuration: $0) }
        registry.register(AnalyticsService.typeName, summary: AnalyticsService.summary, settingKeys: AnalyticsService.settingKeys) { try AnalyticsService(configuration: $0) }
        registry.register(SessionLockService.typeName, summary: SessionLockService.summary, settingKeys: SessionLockService.settingKeys) { try SessionLockService(configuration: $0) }
        registry.register(NotificationService.typeName, summary: NotificationService.summary, settingKeys: NotificationService.settingKeys) { try NotificationService(configuration: $0, desktopNotifications: desktopNotifications) }
        registry.register(ExecService.typeName, summary: ExecService.summary, settingKeys: ExecService.settingKeys) { try ExecService(configuration: $0) }
        registry.register(ProbeService.typeName, summary: ProbeService.summary, settingKeys: ProbeService.settingKeys) { try ProbeService(configuration: $0) }
        return registry
    }

    /// `registry` with the built-in notification service's desktop sink on `transport`: how the
    /// daemon gives it the client on its edge loop. A type of your own registered under the
    /// same name is left as it is.
    package static func providingDesktopNotifications(_ transport: any DesktopNotificationTransport, in registry: ServiceRegistry) -> ServiceRegistry {
        guard let entry = registry.entriesByName.first(where: { $0.name == NotificationService.typeName }),
              entry.summary == NotificationService.summary, entry.settingKeys == NotificationService.settingKeys else { return registry }
        var registry = registry
        registry.register(NotificationService.typeName, summary: NotificationService.summary, settingKeys: NotificationService.settingKeys) {
            try NotificationService(configuration: $0, desktopNotifications: transport)
        }
        return registry
    }
}
