/// CRC-32 (IEEE 802.3, as zlib computes it): tells a whole record (restorable state, an analytics
/// log frame) from a torn or corrupted one.
package enum CRC32 {
    /// Four tables of 256, one after the other: the classic byte table, then each entry advanced
    /// by one more zero byte, so four bytes go in one step with independent lookups ("slicing by
    /// 4"): the restorable state is checksummed before every request's `STATUS=`.
    private static let table: [UInt32] = {
        let first: [UInt32] = (0..<256).map { index in
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            return value
        }
        var table = first
        for slice in 1..<4 {
            table += table[(slice - 1) * 256 ..< slice * 256].map { first[Int($0 & 0xFF)] ^ ($0 >> 8) }
        }
        return table
    }()

    /// The checksum of `bytes`.
    package static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        if let crc = bytes.withContiguousStorageIfAvailable(checksum(contiguous:)) { return crc }
        return Array(bytes).withUnsafeBufferPointer(checksum(contiguous:))
    }

    private static func checksum(contiguous bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            var crc: UInt32 = 0xFFFF_FFFF
            var index = bytes.startIndex
            while bytes.endIndex - index >= 4 {
                crc ^= UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
                crc = table[768 + Int(crc & 0xFF)] ^ table[512 + Int((crc >> 8) & 0xFF)]
                    ^ table[256 + Int((crc >> 16) & 0xFF)] ^ table[Int(crc >> 24)]
                index += 4
            }
            while index < bytes.endIndex {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return crc ^ 0xFFFF_FFFF
        }
    }
}
