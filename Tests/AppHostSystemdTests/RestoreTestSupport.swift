import AppHost
import AppHostTestSupport
import CAppHostShims
import Glibc

/// Why a test's own setup failed.
struct SetupFailure: Error, CustomStringConvertible {
    let description: String

    init(_ operation: String, code: Int32 = errno) {
        description = "\(operation): \(String(cString: strerror(abs(code)))) (errno \(abs(code)))"
    }
}

/// A memfd holding `bytes`, with the four seals when `sealed`: what the fd store keeps.
func makeMemoryFile(_ bytes: [UInt8], sealed: Bool = true) throws -> Int32 {
    let fd = apphost_memfd_create_sealable("restore-test")
    guard fd >= 0 else { throw SetupFailure("memfd_create", code: fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else {
        close(fd)
        throw SetupFailure("write")
    }
    if sealed {
        let result = apphost_add_seals(fd, apphost_complete_seals())
        guard result == 0 else {
            close(fd)
            throw SetupFailure("F_ADD_SEALS", code: result)
        }
    }
    return fd
}

/// An empty pipe, close-on-exec: a read of its read end would wait forever.
func makePipe() throws -> (read: Int32, write: Int32) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw SetupFailure("pipe") }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (ends[0], ends[1])
}

/// The device and inode `fd` refers to, nil when `fd` is not open: after a close, the number
/// may already be another test's fd, but never again the same file.
func fileIdentity(_ fd: Int32) -> [UInt64]? {
    var status = stat()
    guard fstat(fd, &status) == 0 else { return nil }
    return [UInt64(status.st_dev), UInt64(status.st_ino)]
}

/// Whether `fd` no longer refers to the file that had `identity`.
func isClosed(_ fd: Int32, identity: [UInt64]?) -> Bool {
    identity != nil && fileIdentity(fd) != identity
}

extension DatagramReceiver {
    /// The next datagram's text and the fds passed with it (the receiver owns them), or nil
    /// after the timeout.
    func receiveWithDescriptors() -> (text: String, descriptors: [Int32])? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var fds = [Int32](repeating: -1, count: 8)
        var count: Int32 = 0
        let received = buffer.withUnsafeMutableBytes { bytes in
            fds.withUnsafeMutableBufferPointer { apphost_receive_with_fds(fd, bytes.baseAddress, bytes.count, $0.baseAddress, Int32($0.count), &count) }
        }
        guard received >= 0 else { return nil }
        return (String(decoding: buffer[0..<received], as: UTF8.self), Array(fds[0..<Int(count)]))
    }
}

extension RestorableState {
    /// A state with some of everything, at `generation`.
    static func sample(generation: UInt64) -> RestorableState {
        RestorableState(
            generation: generation,
            isInBackground: true,
            isSessionLocked: true,
            sessionLockReason: "screen locked · idle",
            services: ["analytics": [1, 2, 3], "notify/desktop": Array("ünïcode".utf8), "empty": []]
        )
    }
}
