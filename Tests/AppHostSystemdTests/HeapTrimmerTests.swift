import AppHostSystemd
import Glibc
import Testing

@Suite struct HeapTrimmerTests {
    @Test func trimReleasesFreedHeap() {
        // Free many small blocks above a live one so glibc keeps the pages; malloc_trim(0) then
        // has something to give back.
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<20_000 { blocks.append(malloc(512)!) }
        for block in blocks.dropLast() { memset(block, 1, 512) }
        for block in blocks.dropLast() { free(block) }
        #expect(HeapTrimmer.trim())
        free(blocks.last!)
    }
}
