#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A fresh, empty directory `/tmp/<prefix>-XXXXXX`, made by `mkdtemp` (mode 0700); the caller
/// removes it.
/// - Throws: `TemporaryDirectoryError` with errno's text when `mkdtemp` fails.
public func makeTemporaryDirectory(_ prefix: String = "apphost") throws -> String {
    let template = "/tmp/\(prefix)-XXXXXX"
    var bytes = Array(template.utf8CString)
    guard let made = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw TemporaryDirectoryError(template: template, errno: errno)
    }
    return String(cString: made)
}

/// `mkdtemp` failed.
public struct TemporaryDirectoryError: Error, CustomStringConvertible {
    /// The template passed to `mkdtemp`.
    public let template: String
    /// The errno `mkdtemp` set.
    public let errno: Int32

    /// The template and errno's text.
    public var description: String { "mkdtemp \(template): \(String(cString: strerror(errno))) (errno \(errno))" }
}
