extension Duration {
    /// Whole microseconds, as systemd's `*_USEC` fields and PSI triggers count; negative is 0.
    package var wholeMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
