import AppHost
import AppHostSupport
import SystemPackage

/// Why a kept copy of `RestorableState` was not read back: what the file is and what was wrong
/// with it, for the warning that names the fd or path.
///
/// A struct with a ``Code``, as swift-service-lifecycle's `ServiceGroupError`: a new code is not
/// a breaking change.
public struct RestorableStateReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case notRegularFile, notSealed, notSealable, unreadable, format
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// A pipe, socket, FIFO, device or directory: refused without reading, because a read
        /// could wait forever.
        public static let notRegularFile = Code(.notRegularFile)
        /// A memfd missing some of the four seals: its content could still change under the reader.
        public static let notSealed = Code(.notSealed)
        /// A file that cannot be sealed at all (not a memfd), where a sealed one was required.
        public static let notSealable = Code(.notSealable)
        /// `fstat`, `lseek` or `read` failed.
        public static let unreadable = Code(.unreadable)
        /// The bytes are not a state this binary reads: damaged, too large, from a newer format.
        public static let format = Code(.format)

        /// The code's name.
        public var description: String {
            switch base {
            case .notRegularFile: "notRegularFile"
            case .notSealed: "notSealed"
            case .notSealable: "notSealable"
            case .unreadable: "unreadable"
            case .format: "format"
            }
        }
    }

    /// What was wrong.
    public let code: Code
    /// What it says: the file's kind, the seals found, the failed call, or the format error.
    public let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Not a regular file but a `kind` ("a FIFO"); not read.
    public static func notRegularFile(kind: String) -> Self {
        Self(.notRegularFile, "it is \(kind), not a regular file (not read)")
    }

    /// A memfd with only `seals` of the four.
    public static func notSealed(seals: Int32) -> Self {
        Self(.notSealed, "it is not sealed against change (seals 0x\(String(seals, radix: 16)), needs 0x\(String(FileDescriptor.completeSeals, radix: 16)))")
    }

    /// Not a memfd: `F_GET_SEALS` failed with errno `code`.
    public static func notSealable(code: Int32) -> Self {
        Self(.notSealable, "it is not a sealed memory file (F_GET_SEALS: \(SystemErrorText.describe(code)))")
    }

    /// `operation` failed with errno `code`.
    public static func unreadable(operation: String, code: Int32) -> Self {
        Self(.unreadable, "\(operation): \(SystemErrorText.describe(code))")
    }

    /// The bytes do not decode.
    public static func format(_ error: RestorableStateFormatError) -> Self {
        Self(.format, "\(error)")
    }
}
