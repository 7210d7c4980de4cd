import AppHost

/// The services apphostd ships, by the name the config gives as `type`.
public enum BuiltinServices {
    /// A registry holding every built-in service; add your own types to it before running.
    public static func registry() -> ServiceRegistry {
        var registry = ServiceRegistry()
        registry.register(LoggerService.typeName, summary: LoggerService.summary, settingKeys: LoggerService.settingKeys) { try LoggerService(configuration: $0) }
        registry.register(AnalyticsService.typeName, summary: AnalyticsService.summary, settingKeys: AnalyticsService.settingKeys) { try AnalyticsService(configuration: $0) }
        registry.register(SessionLockService.typeName, summary: SessionLockService.summary, settingKeys: SessionLockService.settingKeys) { try SessionLockService(configuration: $0) }
        registry.register(NotificationService.typeName, summary: NotificationService.summary, settingKeys: NotificationService.settingKeys) { try NotificationService(configuration: $0) }
        registry.register(ExecService.typeName, summary: ExecService.summary, settingKeys: ExecService.settingKeys) { try ExecService(configuration: $0) }
        registry.register(ProbeService.typeName, summary: ProbeService.summary, settingKeys: ProbeService.settingKeys) { try ProbeService(configuration: $0) }
        return registry
    }
}
