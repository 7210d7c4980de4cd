import AppHostTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

// What the daemon told so far: its datagrams, exit, stderr, memory and pending signals.
extension NotifyRecorder {
    /// Every datagram so far, oldest first.
    var datagrams: [Datagram] { recording.state.withLock { $0.datagrams } }

    /// The datagrams with index in `range` (clamped).
    func datagrams(_ range: Range<Int>) -> [Datagram] {
        let all = datagrams
        let lower = min(max(range.lowerBound, 0), all.count)
        let upper = min(max(range.upperBound, lower), all.count)
        return Array(all[lower..<upper])
    }

    /// How the daemon ended, or nil while it runs.
    var exit: Exit? { recording.state.withLock { $0.exit } }

    /// The daemon's stderr so far.
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// `VmRSS` (or another `/proc/PID/status` field, such as `VmHWM`) in KiB.
    func memory(_ field: String = "VmRSS") throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            if let kib = Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") { return kib }
        }
        throw HarnessError("no \(field) in /proc/\(pid)/status")
    }

    /// The process-directed signals pending for the daemon (`ShdPnd:` in `/proc/PID/status`): sent
    /// but not yet read from its signalfd. Empty once the daemon exited.
    func pendingSignals() -> Set<Int32> {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ShdPnd:") }),
            let mask = UInt64(line.dropFirst("ShdPnd:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return [] }
        return Set((1...64).filter { mask & (UInt64(1) << UInt64($0 - 1)) != 0 }.map(Int32.init))
    }

    /// Every datagram and the tail of stderr, for failure messages.
    func diagnostics() -> String {
        let all = datagrams
        let list = all.map { "  \($0) (+\(Self.milliseconds($0.arrival - startedAt)) ms)" }
        let shown = list.count > 80 ? ["  (\(list.count - 80) earlier)"] + list.suffix(80) : list
        let stderrLines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        return """
            --- daemon \(pid): \(exit.map { "\($0) at +\(Self.milliseconds($0.at - startedAt)) ms" } ?? "running")
            --- \(all.count) datagrams:
            \(shown.joined(separator: "\n"))
            --- stderr (last 60 lines of \(stderrLines.count)):
            \(stderrLines.suffix(60).joined(separator: "\n"))
            --- work directory: \(directory)
            """
    }

    /// A duration in milliseconds, one decimal.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let ms = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }
}
