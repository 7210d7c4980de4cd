import AppHostTestKit
import Testing

@Suite struct TestLogTests {
    @Test func aWaitWhoseTimeRunsOutFirstEndsWithNil() async {
        let log = TestLog<Int>()
        // With no time at all the timer often ends before the wait registers; it must still end.
        for _ in 0..<200 {
            #expect(await log.first(timeout: .zero) { _ in true } == nil)
        }
    }

    @Test func aWaitEndsWithTheElementWhenItComesLater() async {
        let log = TestLog<Int>()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { #expect(await log.first { $0 == 3 } == 3) }
            for value in 1...3 { log.append(value) }
        }
    }

    @Test func aPredicateMayReadTheLogItself() async {
        let log = TestLog<Int>()
        log.append(1)
        log.append(2)
        #expect(await log.first(timeout: .seconds(1)) { _ in log.count == 2 } == 1)
    }

    @Test func onlyElementsFromTheStartPositionCount() async {
        let log = TestLog<String>()
        log.append("a")
        #expect(await log.first(from: 1, timeout: .milliseconds(20)) { $0 == "a" } == nil)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { #expect(await log.first(from: 3) { $0 == "a" } == "a") }
            log.append("a")  // position 1: too early
            log.append("b")
            log.append("a")  // position 3
        }
        #expect(log.all == ["a", "a", "b", "a"])
    }
}
