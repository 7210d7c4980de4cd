#if canImport(Glibc)
import Glibc
#endif

/// Files of the targets whose reader takes a path: one directory per process under /dev/shm
/// (memory, so a flush's fsync costs nothing), removed at exit, each input written over the last.
enum FuzzScratch {
    private static let root: String = {
        var template = Array((access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp").utf8) + Array("/apphost-fuzz-XXXXXX".utf8) + [0]
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { mkdtemp($0.baseAddress!) }
        }
        guard made != nil else { fatalError("apphost-fuzz: cannot make a scratch directory: errno \(errno)") }
        let path = String(decoding: template.dropLast(), as: UTF8.self)
        atexit { FuzzScratch.removeAll() }
        return path
    }()

    /// `root/name`, made once.
    static func directory(_ name: String) -> String {
        let path = root + "/" + name
        mkdir(path, 0o700)
        return path
    }

    /// A FIFO `root/name.fifo`, made once.
    static func fifo(_ name: String) -> String {
        let path = root + "/" + name + ".fifo"
        mkfifo(path, 0o600)
        return path
    }

    /// Replaces `path` with `bytes`, mode 0600.
    static func write(_ bytes: [UInt8], to path: String) {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "apphost-fuzz: cannot create \(path): errno \(errno)")
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            precondition(written > 0, "apphost-fuzz: cannot write \(path): errno \(errno)")
            offset += written
        }
    }

    /// The file's length; -1 when it cannot be read.
    static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    /// The names in `directory`, sorted; dot files only with `hidden`.
    static func entries(of directory: String, hidden: Bool = false) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != "..", hidden || !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes the scratch tree (one level of directories and FIFOs, as the targets make it).
    static func removeAll() {
        for name in entries(of: root, hidden: true) {
            let path = root + "/" + name
            for file in entries(of: path, hidden: true) { unlink(path + "/" + file) }
            if rmdir(path) != 0 { unlink(path) }
        }
        rmdir(root)
    }
}
