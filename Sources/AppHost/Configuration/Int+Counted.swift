// Counts in messages: "1 service", "2 services", never "1 services".

extension Int {
    /// The count and `noun`, plural unless it is 1: `3.counted("service")` is "3 services".
    /// `plural` for a noun whose plural is not `noun + "s"`.
    package func counted(_ noun: String, plural: String? = nil) -> String {
        "\(self) \(self == 1 ? noun : plural ?? noun + "s")"
    }
}
