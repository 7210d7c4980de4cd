import AppHost
import AppHostSupport
import CAppHostShims
import Glibc
import SystemPackage

/// One open descriptor the memory pressure loop waits on, and how to open it under systemd's
/// memory pressure protocol (sd_event_add_memory_pressure(3)).
package struct MemoryPressureEndpoint: Sendable {
    /// What the descriptor is; decides the poll event and how an event is consumed.
    enum Kind: String, Sendable {
        /// A PSI file (procfs or cgroupfs) with a trigger written: waits for POLLPRI.
        case psi = "PSI"
        /// A FIFO: waits for POLLIN and drains what was written.
        case fifo
        /// A character device: waits for POLLIN and drains.
        case characterDevice = "character device"
        /// A connected AF_UNIX stream socket: waits for POLLIN and drains.
        case socket
    }

    /// The descriptor (replaced when a read-only FIFO is reopened after its writer left).
    package var fd: Int32
    let kind: Kind
    let path: String
    /// The level an event on this descriptor means.
    let level: MemoryWarningLevel
    /// The trigger written (PSI) or "" .
    let trigger: String
    /// Flags to reopen a FIFO with.
    let openFlags: Int32

    /// POLLPRI for PSI, POLLIN for everything else.
    var pollEvents: Int16 { kind == .psi ? Int16(POLLPRI) : Int16(POLLIN) }

    /// A failure to open, as a sentence for the log.
    struct Failure: Error, Sendable {
        let reason: String
    }

    private static let procSuperMagic = 0x9fa0
    private static let cgroup2SuperMagic = 0x6367_7270

    /// Opens a PSI file and writes `trigger` (with the NUL the kernel expects: it overwrites the
    /// last byte written with one).
    static func openPSI(path: String, trigger: [UInt8], level: MemoryWarningLevel) -> Result<Self, Failure> {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return .failure(Failure(reason: SystemErrorText.describe(errno))) }
        var bytes = trigger
        if bytes.last != 0 { bytes.append(0) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            let code = written < 0 ? errno : EIO
            close(fd)
            let text = String(decoding: trigger.prefix { $0 != 0 }, as: UTF8.self)
            return .failure(Failure(reason: "trigger \"\(text)\" refused: \(SystemErrorText.describe(code))"))
        }
        let text = String(decoding: trigger.prefix { $0 != 0 }, as: UTF8.self)
        return .success(Self(fd: fd, kind: .psi, path: path, level: level, trigger: text, openFlags: 0))
    }

    /// Opens whatever `$MEMORY_PRESSURE_WATCH` names, as systemd does: a socket is connected, a PSI
    /// file gets `write` (or `defaultTrigger`) written, a FIFO or character device is opened for
    /// reading. Events from the watch variable mean a warning.
    static func openWatch(path: String, write: [UInt8]?, defaultTrigger: String) -> Result<Self, Failure> {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return .failure(Failure(reason: SystemErrorText.describe(errno)))
        }
        switch status.st_mode & S_IFMT {
        case S_IFSOCK:
            return connectSocket(path: path, write: write)
        case S_IFREG:
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return .failure(Failure(reason: SystemErrorText.describe(errno))) }
            let fileSystem = apphost_filesystem_type(fd)
            close(fd)
            guard fileSystem == procSuperMagic || fileSystem == cgroup2SuperMagic else {
                return .failure(Failure(reason: "a regular file outside procfs and cgroupfs is not a PSI file"))
            }
            return openPSI(path: path, trigger: write ?? Array(defaultTrigger.utf8), level: .warning)
        case S_IFIFO:
            // Read-write keeps a writer on the FIFO ourselves, so POLLHUP never fires when the
            // outside writer closes (a read-only FIFO would report it forever: a busy loop).
            var flags = O_RDWR | O_NONBLOCK | O_CLOEXEC
            var fd = open(path, flags)
            if fd < 0 && errno == EACCES {
                flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
                fd = open(path, flags)
            }
            guard fd >= 0 else { return .failure(Failure(reason: SystemErrorText.describe(errno))) }
            return .success(Self(fd: fd, kind: .fifo, path: path, level: .warning, trigger: "", openFlags: flags))
        case S_IFCHR:
            let flags = (write == nil ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY
            let fd = open(path, flags)
            guard fd >= 0 else { return .failure(Failure(reason: SystemErrorText.describe(errno))) }
            if let write, !writeAll(fd, write) {
                let code = errno
                close(fd)
                return .failure(Failure(reason: "writing MEMORY_PRESSURE_WRITE failed: \(SystemErrorText.describe(code))"))
            }
            return .success(Self(fd: fd, kind: .characterDevice, path: path, level: .warning, trigger: "", openFlags: flags))
        default:
            return .failure(Failure(reason: "not a PSI file, FIFO, character device or AF_UNIX socket"))
        }
    }

    /// Connects a non-blocking AF_UNIX stream socket and sends `write` if given.
    private static func connectSocket(path: String, write: [UInt8]?) -> Result<Self, Failure> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            return .failure(Failure(reason: "socket path too long"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(reason: SystemErrorText.describe(errno))) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            return .failure(Failure(reason: "connect failed: \(SystemErrorText.describe(code))"))
        }
        if let write, !writeAll(fd, write) {
            let code = errno
            close(fd)
            return .failure(Failure(reason: "writing MEMORY_PRESSURE_WRITE failed: \(SystemErrorText.describe(code))"))
        }
        return .success(Self(fd: fd, kind: .socket, path: path, level: .warning, trigger: "", openFlags: 0))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        (try? FileDescriptor(rawValue: fd).sendAll(bytes)) != nil
    }

    /// Reads everything pending. Returns whether any byte arrived and whether the other end is gone.
    mutating func drain() -> (gotData: Bool, endOfFile: Bool, isFlooding: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var gotData = false
        // A pressure message is a few bytes; a source still readable after this many reads in
        // one wake-up is always readable (a `/dev/zero` where a FIFO belongs) and would spin.
        for _ in 0..<Self.readsPerWakeUp {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                gotData = true
                continue
            }
            if count == 0 { return (gotData, true, false) }
            if errno == EINTR { continue }
            return (gotData, errno != EAGAIN && errno != EWOULDBLOCK, false)
        }
        return (gotData, false, true)
    }

    /// How many 4 KiB reads one wake-up may make: 64 KiB of pressure messages.
    static let readsPerWakeUp = 16

    /// Reopens a FIFO after its last writer left (only needed when opened read-only).
    mutating func reopen() -> Bool {
        close(fd)
        fd = open(path, openFlags)
        return fd >= 0
    }
}
