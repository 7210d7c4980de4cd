import AppHost
import SystemPackage

/// Why a kept copy of `RestorableState` was not read back: each says what the file is and what
/// was wrong with it, for the warning that names the fd or path.
public enum RestorableStateReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A pipe, socket, FIFO, device or directory: refused without reading, because a read could
    /// wait forever.
    case notRegularFile(kind: String)
    /// A memfd missing some of the four seals: its content could still change under the reader.
    case notSealed(seals: Int32)
    /// A file that cannot be sealed at all (not a memfd), where a sealed one was required.
    case notSealable(code: Int32)
    /// `fstat`, `lseek` or `read` failed with errno `code`.
    case unreadable(operation: String, code: Int32)
    /// The bytes are not a state this binary reads: damaged, too large, from a newer format.
    case format(RestorableStateFormatError)

    public var description: String {
        switch self {
        case .notRegularFile(let kind): "it is \(kind), not a regular file (not read)"
        case .notSealed(let seals): "it is not sealed against change (seals 0x\(String(seals, radix: 16)), needs 0x\(String(FileDescriptor.completeSeals, radix: 16)))"
        case .notSealable(let code): "it is not a sealed memory file (F_GET_SEALS: \(SystemErrorText.describe(code)))"
        case .unreadable(let operation, let code): "\(operation): \(SystemErrorText.describe(code))"
        case .format(let error): "\(error)"
        }
    }
}
