#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Crash-safe file writes: a reader sees either the old content or the new, never a mix.
public enum AtomicFile {
    /// An I/O failure, with the path and the system's reason.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let operation: String
        public let path: String
        public let code: Int32
        public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
    }

    /// Writes `data` to `path` by writing a temporary file beside it, fsyncing it, renaming it
    /// over `path` and fsyncing the directory. Several files in one directory can share the last
    /// write's directory sync (`syncingDirectory: false` before it): one fsync covers the renames.
    public static func write(_ data: [UInt8], to path: String, permissions: mode_t = 0o600, syncingDirectory: Bool = true) throws(Failure) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions)
        guard fd >= 0 else { throw Failure(operation: "open", path: temporary, code: errno) }
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, data.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw Failure(operation: "write", path: temporary, code: code)
            }
            offset += written
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            throw Failure(operation: "fsync", path: temporary, code: code)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(operation: "rename", path: path, code: code)
        }
        if syncingDirectory { syncDirectory(of: path) }
    }

    /// Reads a whole file, or nil when it does not exist.
    public static func read(_ path: String) throws(Failure) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if access(path, F_OK) != 0 { return nil }
            throw Failure(operation: "read", path: path, code: errno == 0 ? EIO : errno)
        }
        return [UInt8](data)
    }

    /// Removes `path` durably; a missing file is fine.
    public static func remove(_ path: String) throws(Failure) {
        if unlink(path) != 0 && errno != ENOENT { throw Failure(operation: "unlink", path: path, code: errno) }
        syncDirectory(of: path)
    }

    /// Creates `path` and its parents with mode 0700 if missing.
    public static func makeDirectory(_ path: String) throws(Failure) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(operation: "mkdir", path: path, code: errno == 0 ? EACCES : errno)
        }
    }

    static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}
