import CAppHostShims
import SystemPackage

extension FileDescriptor {
    /// Shrink, grow, write and seal: with all four, a memfd's content is final, so what a
    /// restarted daemon reads is what was kept, whoever else holds the fd.
    static let completeSeals = apphost_complete_seals()

    /// A new memory file (`memfd_create`) that can be sealed, close-on-exec; `name` is what
    /// `/proc/PID/fd` shows (`/memfd:NAME`), cut to the kernel's 249 bytes.
    static func sealableMemoryFile(named name: String) throws(Errno) -> FileDescriptor {
        let fd = apphost_memfd_create_sealable(String(decoding: name.utf8.prefix(249), as: UTF8.self))
        guard fd >= 0 else { throw Errno(rawValue: -fd) }
        return FileDescriptor(rawValue: fd)
    }

    /// Adds `seals` (`F_ADD_SEALS`).
    func addSeals(_ seals: Int32) throws(Errno) {
        let result = apphost_add_seals(rawValue, seals)
        guard result == 0 else { throw Errno(rawValue: -result) }
    }

    /// The file's seals (`F_GET_SEALS`).
    /// - Throws: `EINVAL` for a file that cannot be sealed (anything but a memfd).
    func seals() throws(Errno) -> Int32 {
        let seals = apphost_seals(rawValue)
        guard seals >= 0 else { throw Errno(rawValue: -seals) }
        return seals
    }
}
