import Testing

@testable import AppHost

@Suite struct RestorableStateEncodingTests {
    static let state = RestorableState(
        generation: 0x0102_0304_0506_0708,
        isInBackground: true,
        isSessionLocked: true,
        sessionLockReason: "screen locked · idle",
        services: ["analytics": [0, 1, 255], "notify/desktop": Array("ünïcode".utf8), "empty": []]
    )

    /// Header (magic, version 1, generation 9, payload length), `payload`, and a CRC-32 that
    /// matches: bytes that pass every check before the payload is parsed.
    private func checksummed(payload: [UInt8]) -> [UInt8] {
        var bytes = Array("AHRS".utf8) + [1] + [9, 0, 0, 0, 0, 0, 0, 0] + littleEndian(UInt32(payload.count)) + payload
        bytes += littleEndian(CRC32.checksum(bytes))
        return bytes
    }

    private func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    /// A length-prefixed field.
    private func field(_ bytes: [UInt8]) -> [UInt8] {
        littleEndian(UInt32(bytes.count)) + bytes
    }

    private func decodingError(_ bytes: [UInt8]) -> RestorableStateFormatError? {
        do {
            _ = try RestorableState(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func aStateReadsBackEqual() throws {
        for state in [Self.state, RestorableState(generation: 0), RestorableState(generation: .max, services: ["x": Array(repeating: 7, count: 100_000)])] {
            #expect(try RestorableState(decoding: state.encoded()) == state)
        }
    }

    @Test func theEncodingIsTheSameWhateverTheDictionaryOrder() {
        var reordered: [String: [UInt8]] = [:]
        for key in Self.state.services.keys.sorted().reversed() { reordered[key] = Self.state.services[key] }
        var other = Self.state
        other.services = reordered
        #expect(other.encoded() == Self.state.encoded())
    }

    @Test func theHeaderIsMagicVersionGenerationAndPayloadLengthLittleEndian() {
        let bytes = Self.state.encoded()
        #expect(Array(bytes[0..<4]) == Array("AHRS".utf8))
        #expect(bytes[4] == RestorableState.formatVersion)
        #expect(Array(bytes[5..<13]) == [8, 7, 6, 5, 4, 3, 2, 1])
        #expect(Array(bytes[13..<17]) == littleEndian(UInt32(bytes.count - 17 - 4)))
    }

    @Test func theChecksumIsZlibsCRC32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func tooFewBytesAreTruncated() {
        let bytes = Self.state.encoded()
        #expect(decodingError([]) == .truncated(size: 0))
        #expect(decodingError(Array(bytes.prefix(20))) == .truncated(size: 20))
        #expect(decodingError(Array(bytes.dropLast())) == .truncated(size: bytes.count - 1))
    }

    @Test func moreThanTheLimitIsTooLargeBeforeAnythingElse() {
        let size = RestorableState.maximumEncodedSize + 1
        #expect(decodingError([UInt8](repeating: 0, count: size)) == .tooLarge(size: size))
    }

    @Test func otherBytesAreNotRestorableState() {
        var bytes = Self.state.encoded()
        bytes[0] = UInt8(ascii: "X")
        #expect(decodingError(bytes) == .notRestorableState)
        #expect(decodingError(Array("{\"launchCount\": 1, \"lastLaunch\": \"x\"}".utf8)) == .notRestorableState)
    }

    @Test func aNewerFormatVersionIsNamed() {
        var bytes = Self.state.encoded()
        bytes[4] = RestorableState.formatVersion + 1
        #expect(decodingError(bytes) == .newerVersion(RestorableState.formatVersion + 1))
        #expect(decodingError(bytes)?.description == "format version 2, newer than this binary reads (1)")
    }

    @Test func aFlippedByteIsAChecksumMismatch() {
        var bytes = Self.state.encoded()
        bytes[30] ^= 0x04
        #expect(decodingError(bytes) == .checksumMismatch)
        bytes = Self.state.encoded()
        bytes[bytes.count - 1] ^= 0x80
        #expect(decodingError(bytes) == .checksumMismatch)
        bytes = Self.state.encoded()
        bytes[6] ^= 0x01
        #expect(decodingError(bytes) == .checksumMismatch, "the generation is checksummed too")
    }

    @Test func bytesAfterTheChecksumAreMalformed() {
        #expect(decodingError(Self.state.encoded() + [0]) == .malformed("1 bytes after the checksum"))
    }

    @Test(arguments: [
        ([2, 0] + [0, 0, 0, 0] + [0, 0, 0, 0], "flag byte 2"),
        ([0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + [0xAA], "1 bytes left over in the payload"),
        ([0, 0] + [0xFF, 0, 0, 0] + [0, 0, 0, 0], "a field of 255 bytes runs past the end"),
        ([0, 0] + [1, 0, 0, 0, 0xFF] + [0, 0, 0, 0], "the lock reason is not UTF-8"),
        ([0, 0] + [0, 0, 0, 0] + [1, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0], "a service name is empty or not UTF-8"),
        ([0, 0] + [0, 0, 0, 0] + [2, 0, 0, 0] + [1, 0, 0, 0, 0x61, 0, 0, 0, 0] + [1, 0, 0, 0, 0x61, 0, 0, 0, 0], "service \"a\" appears twice"),
        ([0, 0] + [0, 0, 0, 0] + [1, 0, 0, 0], "ends inside a field"),
    ] as [([UInt8], String)])
    func aChecksummedPayloadThatDoesNotParseIsMalformed(payload: [UInt8], reason: String) {
        #expect(decodingError(checksummed(payload: payload)) == .malformed(reason))
    }

    @Test func aChecksummedMinimalPayloadParses() throws {
        let bytes = checksummed(payload: [1, 0] + field(Array("r".utf8)) + littleEndian(1) + field(Array("s".utf8)) + field([42]))
        #expect(try RestorableState(decoding: bytes) == RestorableState(generation: 9, isInBackground: true, sessionLockReason: "r", services: ["s": [42]]))
    }

    @Test func everySingleByteChangeIsRefused() {
        let bytes = Self.state.encoded()
        for index in bytes.indices {
            for change: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[index] ^= change
                #expect(decodingError(damaged) != nil, "byte \(index) ^ \(change) went unnoticed")
            }
        }
    }

    @Test func randomDamageNeverTraps() {
        var random = SplitMix64(seed: 0x5EED)
        let bytes = Self.state.encoded()
        var decoded = 0
        for _ in 0..<20_000 {
            var damaged = bytes
            switch random.next() % 4 {
            case 0:
                for _ in 0...(random.next() % 4) { damaged[Int(random.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: random.next()) }
            case 1:
                damaged = Array(damaged.prefix(Int(random.next() % UInt64(damaged.count))))
            case 2:
                let payload = (0..<(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next() % 3) }
                damaged = checksummed(payload: payload)
            default:
                damaged[13 + Int(random.next() % 4)] = UInt8(truncatingIfNeeded: random.next())
            }
            if (try? RestorableState(decoding: damaged)) != nil { decoded += 1 }
        }
        #expect(decoded < 20_000)
    }
}

/// A small seeded generator, so a failure repeats.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RestorableStateSizeTests {
    @Test func encodedSizeIsTheSizeOfTheEncoding() {
        let state = RestorableState(generation: 9, isInBackground: true, isSessionLocked: true, sessionLockReason: "entered background", services: ["a": [1, 2, 3], "logger": [], "bb": Array(repeating: 7, count: 300)])
        #expect(state.encodedSize == state.encoded().count)
        #expect(RestorableState(generation: 0).encodedSize == RestorableState(generation: 0).encoded().count)
    }
}
