import AppHost
import AppHostSupport
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The health problem kept in the running marker: its first line is the pid, the rest why the
/// run is unhealthy, so a run that systemd's watchdog ends leaves its reason for the next launch.
extension LaunchStateFiles {
    /// The longest problem kept; a longer one is cut.
    static let longestHealthProblem = 1024

    /// Writes the marker again with the problem after the pid (nil: the pid alone). Not synced:
    /// a killed process loses nothing, and a crash of the machine is no watchdog's doing.
    public func recordHealthProblem(_ problem: String?) throws {
        var text = "\(getpid())\n"
        if let problem { text += String(decoding: Array(problem.utf8.prefix(Self.longestHealthProblem)), as: UTF8.self) + "\n" }
        try AtomicFile.writeMarker(Array(text.utf8), to: markerPath)
    }

    /// The problem the marker holds, if any. Anything but a small regular file counts as none;
    /// it never blocks (a FIFO in its place).
    func readMarkedHealthProblem() -> String? {
        guard let fd = try? FileDescriptor.open(FilePath(markerPath), .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking]) else { return nil }
        defer { try? fd.close() }
        let limit = Self.longestHealthProblem + 64
        guard let status = try? fd.stat(), status.type == .regular, status.size <= limit,
            let bytes = try? fd.readAll(limit: limit, expected: Int(status.size))
        else { return nil }
        return Self.healthProblem(inMarker: bytes)
    }

    /// What follows the marker's first line, without its last newline; nil when nothing does.
    package static func healthProblem(inMarker bytes: [UInt8]) -> String? {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        var rest = bytes[(newline + 1)...]
        if rest.last == UInt8(ascii: "\n") { rest = rest.dropLast() }
        guard !rest.isEmpty else { return nil }
        return String(decoding: rest, as: UTF8.self)
    }
}
