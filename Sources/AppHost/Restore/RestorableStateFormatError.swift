/// Why bytes read back are not a `RestorableState` this binary can use.
#if hasAttribute(nonexhaustive)
@nonexhaustive(warn)
#endif
public enum RestorableStateFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer bytes than a header and checksum.
    case truncated(size: Int)
    /// More bytes than `RestorableState.maximumEncodedSize`.
    case tooLarge(size: Int)
    /// Not this format at all.
    case notRestorableState
    /// Written by a newer apphostd.
    case newerVersion(UInt8)
    /// The checksum does not match: damaged.
    case checksumMismatch
    /// The checksum matches but the content does not parse.
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated(let size): "truncated (\(size) bytes)"
        case .tooLarge(let size): "\(size) bytes, more than the \(RestorableState.maximumEncodedSize)-byte limit"
        case .notRestorableState: "not restorable state (wrong magic number)"
        case .newerVersion(let version): "format version \(version), newer than this binary reads (\(RestorableState.formatVersion))"
        case .checksumMismatch: "damaged (checksum mismatch)"
        case .malformed(let reason): "malformed: \(reason)"
        }
    }
}
