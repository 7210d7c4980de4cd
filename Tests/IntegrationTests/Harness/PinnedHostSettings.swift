/// The `host:` settings every config the tests generate gets unless the test gives its own: the
/// machine's conditions off, so that a run across midnight, or a machine with NetworkManager or a
/// battery, adds no request or `STATUS=` text to the exact sequences the tests assert.
enum PinnedHostSettings {
    static let conditionsOff = ["time-changes: false", "network: false", "power: false"]

    /// `host`, with each pinned setting it does not set itself.
    static func adding(to host: [String]) -> [String] {
        let unset = conditionsOff.filter { pinned in
            let key = pinned.prefix { $0 != ":" } + ":"
            return !host.contains { $0.hasPrefix(key) }
        }
        return unset + host
    }
}
