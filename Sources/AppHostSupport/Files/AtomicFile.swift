#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Crash-safe file writes: a reader sees either the old content or the new, never a mix.
package enum AtomicFile {
    /// An I/O failure, with the path and the system's reason.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        package let operation: String
        package let path: String
        package let code: Int32
        /// Said instead of the errno's text, when the system reported no error (a FIFO where a
        /// file belongs).
        package var detail: String? = nil
        package var description: String { "\(operation) \(path): \(detail ?? SystemErrorText.reason(code))" }
    }

    /// Writes `data` to `path` by writing a temporary file beside it, fsyncing it, renaming it
    /// over `path` and fsyncing the directory. Several files in one directory can share the last
    /// write's directory sync (`syncingDirectory: false` before it): one fsync covers the renames.
    /// `durable: false` skips both fsyncs, for a file that is rewritten from memory anyway (the
    /// metrics textfile) or synced later (`sync(_:)`, the launch record after `READY=1`): a
    /// reader still never sees a mix.
    package static func write(_ data: [UInt8], to path: String, permissions: mode_t = 0o600, syncingDirectory: Bool = true, durable: Bool = true) throws(Failure) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions)
        guard fd >= 0 else { throw Failure(operation: "open", path: temporary, code: errno) }
        // The mode asked for, whatever the umask (a hardened unit's UMask=0077 would leave a
        // file meant for another user's reader, 0644, unreadable to it).
        _ = fchmod(fd, permissions)
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
        if durable, fsync(fd) != 0 {
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
        if durable, syncingDirectory { syncDirectory(of: path) }
    }

    /// Removes what `write(_:to:)` left of `path` when a process died mid-write (SIGKILL):
    /// `path.tmp-PID` files whose process no longer exists. Returns the names removed.
    @discardableResult
    package static func removeLeftovers(of path: String) -> [String] {
        let directory = parentDirectory(of: path)
        return removeLeftovers(inDirectory: directory, of: String(path.dropFirst(directory.count + 1)))
    }

    /// Removes what `write(_:to:)` left in `directory` when a process died mid-write: every
    /// `NAME.tmp-PID` whose process no longer exists (of the file `name` only, when given).
    /// Returns the names removed.
    @discardableResult
    package static func removeLeftovers(inDirectory directory: String, of name: String? = nil) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let (file, pid) = temporaryName(entryName), name == nil || file == name else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            if unlink(directory + "/" + entryName) == 0 { removed.append(entryName) }
        }
        return removed
    }

    /// The file and the writer's pid a temporary name of `write(_:to:)` (`NAME.tmp-PID`) stands
    /// for; nil for any other name. Compared by bytes: no string search links the regex engine.
    static func temporaryName(_ name: String) -> (file: String, pid: Int32)? {
        let bytes = Array(name.utf8)
        let marker = Array(".tmp-".utf8)
        guard bytes.count > marker.count + 1 else { return nil }
        for start in stride(from: bytes.count - marker.count - 1, through: 1, by: -1) where bytes[start..<start + marker.count].elementsEqual(marker) {
            guard let pid = Int32(String(decoding: bytes[(start + marker.count)...], as: UTF8.self)), pid > 0 else { return nil }
            return (String(decoding: bytes[..<start], as: UTF8.self), pid)
        }
        return nil
    }

    /// Reads a whole file, or nil when it does not exist. Anything but a regular file (a FIFO, a
    /// socket, a device, a directory) is refused unread: opened without blocking, so a FIFO
    /// where a state file belongs never stalls its reader.
    package static func read(_ path: String) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Failure(operation: "open", path: path, code: errno)
        }
        defer { close(fd) }
        let descriptor = FileDescriptor(rawValue: fd)
        let type: FileType
        do {
            type = try descriptor.stat().type
        } catch {
            throw Failure(operation: "fstat", path: path, code: error.rawValue)
        }
        guard type == .regular else {
            throw Failure(operation: "read", path: path, code: 0, detail: "\(type.kindDescription), not a regular file")
        }
        do {
            return try descriptor.readAll()
        } catch {
            throw Failure(operation: "read", path: path, code: error.rawValue)
        }
    }

    /// Creates or truncates `path` with `data`, without a sync of its own: for a marker whose
    /// existence is what counts. The directory sync that follows (`syncDirectory(of:)`, or a
    /// later `write` into the same directory) makes the entry durable.
    /// Something else in its place (a FIFO, which would block the open, a symbolic link, an
    /// empty directory) is removed first and a file made.
    package static func writeMarker(_ data: [UInt8], to path: String, permissions: mode_t = 0o600) throws(Failure) {
        var fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, permissions)
        var status = stat()
        if fd >= 0, fstat(fd, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            close(fd)
            fd = -1
            errno = ENXIO
        }
        if fd < 0, [ELOOP, ENXIO, EISDIR].contains(errno) {
            if unlink(path) != 0, errno == EISDIR || errno == EPERM { rmdir(path) }
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, permissions)
        }
        guard fd >= 0 else { throw Failure(operation: "open", path: path, code: errno) }
        defer { close(fd) }
        guard ftruncate(fd, 0) == 0 else { throw Failure(operation: "ftruncate", path: path, code: errno) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
        guard written == data.count else { throw Failure(operation: "write", path: path, code: written < 0 ? errno : EIO) }
    }

    /// Removes `path` durably (or, `syncing: false`, leaves the directory sync to a later
    /// `syncDirectory(of:)`); a missing file is fine.
    package static func remove(_ path: String, syncing: Bool = true) throws(Failure) {
        if unlink(path) != 0 && errno != ENOENT { throw Failure(operation: "unlink", path: path, code: errno) }
        if syncing { syncDirectory(of: path) }
    }

    /// Creates `path` and its parents with mode 0700 if missing.
    package static func makeDirectory(_ path: String) throws(Failure) {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure(operation: "mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = parentDirectory(of: path)
        if parent != path, parent != "." { try makeDirectory(parent) }
        if mkdir(path, 0o700) != 0 {
            guard errno == EEXIST else { throw Failure(operation: "mkdir", path: path, code: errno) }
            return
        }
        // Exactly 0700, whatever the umask.
        chmod(path, 0o700)
    }

    /// Syncs `path`'s data and size to disk, for a file written with `durable: false` whose
    /// sync could wait until later.
    package static func sync(_ path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw Failure(operation: "open", path: path, code: errno) }
        defer { close(fd) }
        guard fdatasync(fd) == 0 else { throw Failure(operation: "fdatasync", path: path, code: errno) }
    }

    /// Gives `path`'s file a second name, `copy`, replacing what `copy` named at once (a link
    /// made beside it, renamed over it): a crash never leaves `copy` missing once it existed.
    /// Durable with the directory's next sync.
    package static func link(_ path: String, as copy: String) throws(Failure) {
        let temporary = copy + ".tmp-\(getpid())"
        unlink(temporary)
        guard Glibc.link(path, temporary) == 0 else { throw Failure(operation: "link", path: temporary, code: errno) }
        guard rename(temporary, copy) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(operation: "rename", path: copy, code: code)
        }
    }

    /// Syncs the directory that holds `path`, making renames, creations and removals in it
    /// durable. A failure is only worth reporting where a caller says so; the writes above
    /// stand either way.
    static func syncDirectory(of path: String) {
        try? syncDirectoryReportingFailure(of: path)
    }

    /// `syncDirectory(of:)`, saying what failed.
    package static func syncDirectoryReportingFailure(of path: String) throws(Failure) {
        let directory = parentDirectory(of: path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(operation: "open", path: directory, code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(operation: "fsync", path: directory, code: errno) }
    }

    /// The directory part of `path` (`.` for a bare name, `/` for the root).
    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }
}
