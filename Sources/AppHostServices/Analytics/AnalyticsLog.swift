import AppHost
import AppHostSupport

/// The append-only event log's framing: each record is a 4-byte little-endian payload length,
/// a 4-byte little-endian CRC-32 of the payload, then the JSON payload.
///
/// A reader stops at the first frame that is short, too long, fails its checksum or does not
/// decode: everything before it is kept, the rest is a torn or corrupt tail. A whole record of
/// an unknown kind (a newer daemon's) is skipped and the reading goes on.
package enum AnalyticsLog {
    /// Frames longer than this are corruption, not records.
    static let maximumPayload = 1 << 20
    static let headerSize = 8

    /// The bytes of one framed record.
    package static func frame(_ event: AnalyticsEvent) -> [UInt8] {
        let payload = Array(event.json.rendered().utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + payload.count)
        appendLittleEndian(UInt32(payload.count), to: &bytes)
        appendLittleEndian(CRC32.checksum(payload), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// What a scan of a log found.
    package struct Scan: Sendable {
        /// The whole records, in order.
        package var events: [AnalyticsEvent]
        /// The length of the prefix made of whole records.
        package var validLength: Int
        /// The file's length; more than `validLength` when the tail is torn or corrupt.
        package var totalLength: Int
        /// Whole records of kinds this version does not count, left out of `events`.
        package var skipped = 0
        /// The highest sequence number of the whole records, skipped ones included.
        package var lastSequence: UInt64 = 0

        package var hasDamagedTail: Bool { validLength < totalLength }
    }

    /// Reads records until the end or the first damaged frame.
    package static func scan(_ bytes: [UInt8]) -> Scan {
        var scan = Scan(events: [], validLength: 0, totalLength: bytes.count)
        var offset = 0
        while bytes.count - offset >= headerSize {
            let length = Int(readLittleEndian(bytes, at: offset))
            let checksum = readLittleEndian(bytes, at: offset + 4)
            let start = offset + headerSize
            guard length > 0, length <= maximumPayload, length <= bytes.count - start else { break }
            let payload = bytes[start..<(start + length)]
            guard CRC32.checksum(payload) == checksum, let json = try? JSONValue(parsing: payload) else { break }
            if let event = AnalyticsEvent(json: json) {
                scan.events.append(event)
                scan.lastSequence = max(scan.lastSequence, event.seq)
            } else if let seq = AnalyticsEvent.sequenceOfUnknownKind(json) {
                scan.skipped += 1
                scan.lastSequence = max(scan.lastSequence, seq)
            } else {
                break
            }
            offset = start + length
        }
        scan.validLength = offset
        return scan
    }

    private static func appendLittleEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    private static func readLittleEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, index in value | UInt32(bytes[offset + index]) << UInt32(index * 8) }
    }
}
