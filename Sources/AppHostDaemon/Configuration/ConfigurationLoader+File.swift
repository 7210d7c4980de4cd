import AppHost
import AppHostSupport
import AppHostSystemd
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension ConfigurationLoader {
    /// Reads `path` and validates it like `load(text:file:)`.
    ///
    /// Refuses, with the reason and the path: a missing file (ENOENT), a symlink loop (ELOOP),
    /// an unreadable file (EACCES), anything that is not a regular file, files over 1 MiB, and
    /// bytes that are not UTF-8.
    ///
    /// `path` may carry bytes that are not UTF-8 (see `RawPath`): the file is opened by those
    /// bytes and messages show them escaped.
    func load(path given: String) throws(InvalidConfiguration) -> DaemonConfiguration {
        let path = RawPath.displayed(given)
        let bytes = try ConfigurationErrorCollector.alone { () throws(ConfigurationError) in try Self.readConfigFile(given) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let (offset, line) = Self.firstInvalidUTF8(bytes)
            throw InvalidConfiguration(ConfigurationError(
                file: path, line: line, keyPath: "",
                message: "the file is not UTF-8 text (invalid byte 0x\(String(bytes[offset], radix: 16)) at offset \(offset))",
                hint: "a config file is plain UTF-8 YAML; is this the right file?"
            ))
        }
        return try load(text: text, file: path)
    }

    /// The file's bytes, at most `sizeLimit`, or an error saying why not.
    static func readConfigFile(_ given: String) throws(ConfigurationError) -> [UInt8] {
        let path = RawPath.displayed(given)
        func failure(_ message: String, hint: String? = nil) -> ConfigurationError {
            ConfigurationError(file: path, keyPath: "", message: message, hint: hint)
        }
        func systemFailure(_ code: Int32, _ action: String) -> ConfigurationError {
            let reason = SystemErrorText.reason(code)
            switch code {
            case ENOENT:
                return failure("cannot \(action): no such file (ENOENT)", hint: "check the path, or pass --config FILE")
            case ELOOP:
                return failure("cannot \(action): symbolic link loop (ELOOP: \(reason))", hint: "point the link at the real file")
            case EACCES, EPERM:
                return failure("cannot \(action): permission denied (\(code == EACCES ? "EACCES" : "EPERM"))",
                               hint: "make it readable by the daemon's user")
            case ENOTDIR:
                return failure("cannot \(action): a component of the path is not a directory (ENOTDIR)")
            default:
                return failure("cannot \(action): \(reason) (errno \(code))")
            }
        }
        guard !path.isEmpty else { throw failure("the config path is empty", hint: "pass --config FILE") }
        // O_NONBLOCK: opening a FIFO must not hang; the type is checked right after.
        let descriptor = (RawPath.bytes(given) + [0]).withUnsafeBufferPointer { name in
            name.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        }
        guard descriptor >= 0 else { throw systemFailure(errno, "open the config file") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw systemFailure(errno, "inspect the config file") }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            throw failure("is a directory, not a config file", hint: "point --config at the YAML file inside it")
        default:
            throw failure("is not a regular file (a device, FIFO or socket)", hint: "point --config at a YAML file")
        }
        if status.st_size > Int(sizeLimit) {
            throw failure("the file is too large (\(status.st_size) bytes; the limit is 1 MiB)",
                          hint: "a config file is a few kilobytes; is this the right file?")
        }
        let bytes: [UInt8]?
        do {
            bytes = try FileDescriptor(rawValue: descriptor).readAll(limit: sizeLimit, expected: Int(status.st_size))
        } catch {
            throw systemFailure(error.rawValue, "read the config file")
        }
        guard let bytes else {
            throw failure("the file is too large (more than 1 MiB)", hint: "a config file is a few kilobytes; is this the right file?")
        }
        return bytes
    }

    /// Offset and 1-based line of the first byte that breaks UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (offset: Int, line: Int) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        var line = 1
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            offset += UTF8.width(scalar)
            if scalar == "\n" { line += 1 }
        }
        return (min(offset, max(bytes.count - 1, 0)), line)
    }
}
