import AppHost

/// The problems a load found so far. The loader reads on past each one, so that a file's
/// problems come out together.
struct ConfigurationErrorCollector {
    /// The most problems `errors` keeps; the rest are counted.
    static let shownLimit = 100

    private var found: [ConfigurationError] = []

    /// How many problems were found so far.
    var count: Int { found.count }

    /// The first `shownLimit` problems in file order (by line; those without a line last, in
    /// the order found) and how many more there are, or nil when there are none.
    var errors: InvalidConfiguration? {
        let ordered = found.enumerated().sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }
        return InvalidConfiguration(ordered.prefix(Self.shownLimit).map(\.element), omitted: max(0, found.count - Self.shownLimit))
    }

    mutating func record(_ error: ConfigurationError) {
        found.append(error)
    }

    mutating func record(_ errors: [ConfigurationError]) {
        found += errors
    }

    /// The value `body` read (nil when the key is absent), or nil when it throws; the error is
    /// recorded.
    mutating func read<Value>(_ body: () throws(ConfigurationError) -> Value?) -> Value? {
        check(body) ?? nil
    }

    /// `body`'s result; its error is the only problem there is (the file cannot be read at all).
    static func alone<Value>(_ body: () throws(ConfigurationError) -> Value) throws(InvalidConfiguration) -> Value {
        do throws(ConfigurationError) {
            return try body()
        } catch {
            throw InvalidConfiguration(error)
        }
    }

    /// `body`'s result, or nil when it throws; the error is recorded.
    @discardableResult
    mutating func check<Value>(_ body: () throws(ConfigurationError) -> Value) -> Value? {
        do throws(ConfigurationError) {
            return try body()
        } catch {
            found.append(error)
            return nil
        }
    }
}
