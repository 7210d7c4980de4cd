// Trimming for config values and environment variables, in plain Swift: Foundation's
// `trimmingCharacters(in:)` goes through `NSString` on Linux, and generic versions pay for
// runtime type lookups, both at every daemon start.

extension Substring {
    /// Without the leading and trailing scalars for which `isTrimmed` holds.
    package func trimming(where isTrimmed: (Unicode.Scalar) -> Bool) -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
              let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return self[endIndex...] }
        return self[first..<scalars.index(after: last)]
    }

    /// Without leading and trailing spaces and tabs.
    package var trimmingSpaces: String { String(trimming(where: Unicode.Scalar.isSpaceOrTab)) }

    /// Without leading and trailing white space and line breaks.
    package var trimmingWhitespace: String { String(trimming(where: \.properties.isWhitespace)) }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    package var trimmingSpaces: String { self[...].trimmingSpaces }

    /// Without leading and trailing white space and line breaks.
    package var trimmingWhitespace: String { self[...].trimmingWhitespace }

    /// Without the line break (`\n` or `\r\n`) at the end, if there is one.
    package var droppingLineBreak: String {
        if hasSuffix("\n") || hasSuffix("\r\n") { return String(dropLast()) }
        return self
    }
}

extension Unicode.Scalar {
    static func isSpaceOrTab(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
}
