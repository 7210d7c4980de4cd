import Glibc

/// One owner per state directory: an exclusive `flock` on `<directory>/lock`, held for the
/// process's life and released by the kernel on any death, SIGKILL included. The file holds the
/// owner's PID so that a second daemon can say who has it.
public final class StateDirectoryLock: Sendable {
    /// Why the lock was not taken.
    #if hasAttribute(nonexhaustive)
    @nonexhaustive(warn)
    #endif
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Another process holds it.
        case held(directory: String, ownerPID: Int32?)
        /// The lock file could not be opened or locked.
        case system(path: String, operation: String, code: Int32)

        public var description: String {
            switch self {
            case .held(let directory, let owner?):
                "state directory \(directory) is in use by process \(owner) (it holds \(directory)/lock); stop it or give this instance its own host.state-directory"
            case .held(let directory, nil):
                "state directory \(directory) is in use by another process (it holds \(directory)/lock); stop it or give this instance its own host.state-directory"
            case .system(let path, let operation, let code):
                "\(operation) \(path): \(SystemErrorText.describe(code))"
            }
        }
    }

    /// The locked directory.
    public let directory: String
    private let descriptor: Int32

    /// Takes the lock, creating the directory and the lock file as needed; never waits.
    public init(directory: String) throws(Failure) {
        do {
            try AtomicFile.makeDirectory(directory)
        } catch {
            throw .system(path: directory, operation: "mkdir", code: error.code)
        }
        let path = directory + "/lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .system(path: path, operation: "open", code: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            defer { close(fd) }
            guard code == EWOULDBLOCK else { throw .system(path: path, operation: "flock", code: code) }
            throw .held(directory: directory, ownerPID: Self.readPID(fd))
        }
        // Written over the last owner's PID, and cut only when that one was longer: on ext4 a
        // truncate to 0 frees the block and costs a journal transaction on every start.
        let text = Array("\(getpid())\n".utf8)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        var status = stat()
        if fstat(fd, &status) != 0 || status.st_size != off_t(text.count) { _ = ftruncate(fd, off_t(text.count)) }
        self.directory = directory
        self.descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace)
    }
}
