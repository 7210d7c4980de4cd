/// Why `apphostd record-exit` recorded nothing: a variable systemd sets for `ExecStopPost=` is
/// missing, or holds what systemd never writes there.
///
/// A struct with a ``Code``, as swift-service-lifecycle's `ServiceGroupError`: a new code is not
/// a breaking change.
public struct ExitRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the variable.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case missing, invalid
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The variable is not set.
        public static let missing = Code(.missing)
        /// The variable holds what systemd never writes there.
        public static let invalid = Code(.invalid)

        /// The code's name.
        public var description: String {
            switch base {
            case .missing: "missing"
            case .invalid: "invalid"
            }
        }
    }

    /// What is wrong.
    public let code: Code
    /// The variable, without `$`.
    public let variable: String
    /// What it holds (``Code/invalid``); nil when it is missing.
    public let value: String?
    /// What belongs there (``Code/invalid``).
    public let expected: String?

    private init(code: Code, variable: String, value: String? = nil, expected: String? = nil) {
        self.code = code
        self.variable = variable
        self.value = value
        self.expected = expected
    }

    /// `$variable` is not set.
    public static func missing(variable: String) -> Self {
        Self(code: .missing, variable: variable)
    }

    /// `$variable` holds `value`, which is not `expected`.
    public static func invalid(variable: String, value: String, expected: String) -> Self {
        Self(code: .invalid, variable: variable, value: value, expected: expected)
    }

    /// One line naming the variable, quoting (a cut of) its value and saying what belongs there.
    public var description: String {
        guard code == .invalid, let value, let expected else {
            return "$\(variable) is not set: systemd sets it for the unit's ExecStopPost= (systemd 232 and later); run record-exit from there"
        }
        return "$\(variable) is \(Self.excerpt(value)), not \(expected)"
    }
    /// The value quoted with control and non-ASCII bytes escaped, cut to 40 bytes (a megabyte of
    /// garbage stays one short line), with its length when cut.
    static func excerpt(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var quoted = "\""
        for byte in bytes.prefix(40) {
            switch byte {
            case UInt8(ascii: "\n"): quoted += "\\n"
            case UInt8(ascii: "\""): quoted += "\\\""
            case UInt8(ascii: "\\"): quoted += "\\\\"
            case 0x20..<0x7F: quoted.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                quoted += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        quoted += "\""
        return bytes.count > 40 ? "\(quoted)… (\(bytes.count) bytes)" : quoted
    }
}
