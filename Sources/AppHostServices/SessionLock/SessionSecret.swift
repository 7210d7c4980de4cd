#if canImport(Glibc)
import AppHostSupport
import Glibc
#endif
import Synchronization
import SystemPackage

/// The session secret held in memory, in a buffer of its own so that locking can overwrite it
/// with zeros before letting it go (a Swift `Array` may leave copies behind).
package final class SessionSecret: Sendable {
    private let storage: Mutex<UnsafeMutableRawBufferPointer?>

    /// Takes ownership of `buffer`, which must come from `UnsafeMutableRawBufferPointer.allocate`.
    init(taking buffer: sending UnsafeMutableRawBufferPointer) {
        storage = Mutex(buffer)
    }

    deinit {
        wipe()
    }

    /// Number of secret bytes still held; 0 after `wipe()`.
    package var count: Int {
        storage.withLock { $0?.count ?? 0 }
    }

    /// Overwrites the bytes with zeros and releases them.
    package func wipe() {
        storage.withLock { buffer in
            guard let held = buffer else { return }
            Self.zero(held)
            held.deallocate()
            buffer = nil
        }
    }

    /// Overwrites `buffer` with zeros in a way the optimiser may not remove.
    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        explicit_bzero(base, buffer.count)
    }

    /// The largest secret read: a key or passphrase is a few bytes to a few KiB; a larger file is
    /// the wrong file, and reading it would hold that much memory.
    package static let sizeLimit = 64 * 1024

    /// Reads the secret at `path`: a regular file owned by the service user (or root) that
    /// group and others cannot read or write. Anything else is refused without blocking: the
    /// open never waits (a FIFO where the file belongs would wait for a writer forever).
    ///
    /// `groupMayRead`: a systemd credential. systemd 255 and later give credential files mode
    /// 0440 (252 gave 0400), in a directory that only the unit's user can reach; group write and
    /// anything for others is still refused.
    ///
    /// The content is never logged or put into an error.
    package static func read(from path: String, groupMayRead: Bool = false) throws(SecretUnavailable) -> SessionSecret {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT:
                throw SecretUnavailable(path: path, problem: "does not exist", fix: "create it with mode 0600, owned by the service user")
            case EACCES, EPERM:
                throw SecretUnavailable(path: path, problem: "is not readable by uid \(getuid())", fix: "chown it to the service user and chmod 600 \(path)")
            default:
                throw SecretUnavailable(path: path, problem: "cannot be opened: \(SystemErrorText.reason(code))", fix: "check the path and its permissions")
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecretUnavailable(path: path, problem: "cannot be inspected: \(SystemErrorText.reason(errno))", fix: "check the path and its permissions")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SecretUnavailable(path: path, problem: "is not a regular file (\(FileType(rawValue: info.st_mode & S_IFMT).kindDescription))", fix: "point the setting at a file holding the secret")
        }
        guard info.st_size <= Self.sizeLimit else {
            throw SecretUnavailable(path: path, problem: "is \(info.st_size) bytes, more than the \(Self.sizeLimit / 1024) KiB a secret may be", fix: "point the setting at the secret itself (a few bytes to a few KiB)")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw SecretUnavailable(path: path, problem: "is owned by uid \(info.st_uid), not by the service user (uid \(geteuid())) or root", fix: "chown it to the service user")
        }
        let loosePermissions = info.st_mode & (groupMayRead ? 0o037 : 0o077)
        guard loosePermissions == 0 else {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw SecretUnavailable(path: path, problem: "is readable or writable by group or others (mode 0\(mode)) and was refused", fix: "chmod 600 \(path)")
        }
        var bytes: [UInt8]?
        do {
            bytes = try FileDescriptor(rawValue: fd).readAll(limit: Self.sizeLimit, expected: Int(info.st_size), wipingCopies: true)
        } catch {
            throw SecretUnavailable(path: path, problem: "cannot be read: \(SystemErrorText.reason(error.rawValue))", fix: "check the file and its permissions")
        }
        defer {
            // The array's storage is unique here: wipe it in place before it is freed.
            bytes?.withUnsafeMutableBytes { zero($0) }
        }
        guard let read = bytes else {
            throw SecretUnavailable(path: path, problem: "grew past the \(Self.sizeLimit / 1024) KiB a secret may be while it was read", fix: "point the setting at the secret itself (a few bytes to a few KiB)")
        }
        guard !read.isEmpty else {
            throw SecretUnavailable(path: path, problem: "is empty", fix: "write the secret into \(path) (mode 0600)")
        }
        let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: read.count, alignment: 1)
        read.withUnsafeBytes { exact.copyMemory(from: $0) }
        return SessionSecret(taking: exact)
    }
}
