import AppHostSystemd

extension DaemonConfiguration.MemoryPressure {
    /// The PSI triggers the memory-pressure source arms.
    var thresholds: MemoryPressureSource.Thresholds {
        MemoryPressureSource.Thresholds(warningStall: warningStall, criticalStall: criticalStall, window: window)
    }
}
