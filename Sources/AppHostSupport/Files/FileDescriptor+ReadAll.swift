#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

extension FileDescriptor {
    /// Everything left to read, at most `limit` bytes: the one way the daemon reads a file.
    ///
    /// Returns nil when there is more than `limit` (the caller says what is too large). Room
    /// starts at `expected + 1` bytes (by default fstat's size; the extra byte sees a file that grew) and
    /// doubles, and is never zero-filled first: a config read used to fault in a 1 MiB buffer,
    /// 256 page faults of every start. A file whose fstat says 0 (those of /proc and /sys, whatever
    /// they hold) gets a page at once, not one byte and then two. With `wipingCopies`, a buffer
    /// left behind when growing is zeroed first (for secrets). EINTR is retried.
    package func readAll(limit: Int, expected: Int? = nil, wipingCopies: Bool = false) throws(Errno) -> [UInt8]? {
        var bytes: [UInt8] = []
        var size = 4095
        if let expected {
            size = expected
        } else if let status = try? stat(), status.size > 0 {
            size = Int(status.size)
        }
        var capacity = Swift.min(Swift.max(size, 0) + 1, limit + 1)
        while true {
            var failure: Errno?
            var ended = false
            var previous = bytes
            bytes = []
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                previous.withUnsafeBytes { raw.copyMemory(from: $0) }
                initialized = previous.count
                while initialized < capacity {
                    do {
                        let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[initialized...]))
                        if count == 0 { ended = true; break }
                        initialized += count
                    } catch {
                        failure = error as? Errno ?? .ioError
                        break
                    }
                }
            }
            if wipingCopies {
                previous.withUnsafeMutableBytes { wipe($0) }
            }
            if let failure {
                if wipingCopies { bytes.withUnsafeMutableBytes { wipe($0) } }
                throw failure
            }
            if ended { return bytes }
            guard bytes.count <= limit else {
                if wipingCopies { bytes.withUnsafeMutableBytes { wipe($0) } }
                return nil
            }
            capacity = Swift.min(capacity * 2, limit + 1)
        }
    }

    /// Everything left to read, for files the daemon writes itself (no limit but 2 GiB, which
    /// only a broken file reaches: `EFBIG`).
    package func readAll() throws(Errno) -> [UInt8] {
        guard let bytes = try readAll(limit: Int(Int32.max)) else { throw .fileTooLarge }
        return bytes
    }

    /// Zeroes `buffer` in a way the optimiser keeps (`explicit_bzero`).
    private func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        explicit_bzero(base, buffer.count)
    }
}
