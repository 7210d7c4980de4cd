import Testing

@testable import AppHost

@Suite struct StringTrimmingTests {
    @Test func spacesAndTabsGoFromBothEndsOnly() {
        #expect(" \t 5s \t".trimmingSpaces == "5s")
        #expect("1 5s".trimmingSpaces == "1 5s")
        #expect("   ".trimmingSpaces == "")
        #expect("".trimmingSpaces == "")
        #expect(" grüße · 5 ".trimmingSpaces == "grüße · 5")
        #expect("x\n".trimmingSpaces == "x\n")
        #expect(Substring("  64KiB ").trimmingSpaces == "64KiB")
    }

    @Test func whitespaceIncludesLineBreaks() {
        #expect("\n c29tZQ== \r\n".trimmingWhitespace == "c29tZQ==")
        #expect("\u{00A0}x\u{2003}".trimmingWhitespace == "x")
    }

    @Test func droppingLineBreakTakesOneFromTheEnd() {
        #expect("line\n".droppingLineBreak == "line")
        #expect("line\r\n".droppingLineBreak == "line")
        #expect("line\n\n".droppingLineBreak == "line\n")
        #expect("line".droppingLineBreak == "line")
        #expect("".droppingLineBreak == "")
    }
}
