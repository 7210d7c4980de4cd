import SystemPackage

extension FileType {
    /// What a file that is not a regular one is, as a refusal puts it: "a FIFO", "a socket".
    package var kindDescription: String {
        switch self {
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .directory: "a directory"
        case .characterSpecial: "a character device"
        case .blockSpecial: "a block device"
        case .symbolicLink: "a symbolic link"
        case .regular: "a regular file"
        default: "a file of type 0o\(String(rawValue, radix: 8))"
        }
    }
}
