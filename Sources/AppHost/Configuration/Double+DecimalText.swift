extension Double {
    /// The value rounded to `digits` places after the point, always with that many digits
    /// (`12.50`): `String(format: "%.2f")` without Foundation.
    package func decimalText(digits: Int) -> String {
        guard isFinite else { return description }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(self) * scale).rounded()
        guard scaled < 9.0e18 else { return description }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        let sign = self < 0 && units > 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(units % UInt64(scale))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
