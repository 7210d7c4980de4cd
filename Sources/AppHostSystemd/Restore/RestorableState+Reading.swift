import AppHost
import AppHostSupport
import SystemPackage

extension RestorableState {
    /// Reads a kept copy from `fd` after checking it is safe to: a regular file (a pipe or
    /// socket is refused unread, so this never waits), sealed with all four seals when
    /// `requiringSeals` (an fd-store memfd), no larger than `maximumEncodedSize` before a byte is
    /// read; then decodes it from offset 0, wherever the fd's shared offset was left.
    init(reading fd: FileDescriptor, requiringSeals: Bool) throws(RestorableStateReadError) {
        let status: Stat
        do {
            status = try fd.stat()
        } catch {
            throw .unreadable(operation: "fstat", code: error.rawValue)
        }
        guard status.type == .regular else { throw .notRegularFile(kind: status.type.kindDescription) }
        if requiringSeals {
            let seals: Int32
            do {
                seals = try fd.seals()
            } catch {
                throw .notSealable(code: error.rawValue)
            }
            guard seals & FileDescriptor.completeSeals == FileDescriptor.completeSeals else { throw .notSealed(seals: seals) }
        }
        guard status.size <= Int64(Self.maximumEncodedSize) else { throw .format(.tooLarge(size: Int(status.size))) }
        do {
            _ = try fd.seek(offset: 0, from: .start)
        } catch {
            throw .unreadable(operation: "lseek", code: (error as? Errno ?? .ioError).rawValue)
        }
        let read: [UInt8]?
        do {
            read = try fd.readAll(limit: Self.maximumEncodedSize, expected: Int(status.size))
        } catch {
            throw .unreadable(operation: "read", code: error.rawValue)
        }
        // Only a file that grew after fstat gets here with more than the limit.
        guard let bytes = read else { throw .format(.tooLarge(size: Self.maximumEncodedSize + 1)) }
        do {
            try self.init(decoding: bytes)
        } catch {
            throw .format(error)
        }
    }
}
