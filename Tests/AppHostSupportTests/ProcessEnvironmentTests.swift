@testable import AppHostSupport
import Glibc
import Testing


@Suite struct ProcessEnvironmentTests {
    @Test("NAME=value pairs: the value is everything after the first =, UTF-8 intact, the first of a name wins")
    func parsesEnvironBlocks() {
        let entries = ["A=1", "B=x=y=café", "NOEQUALS", "A=2", "EMPTY="]
        let pointers = entries.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var list = pointers
        let variables = list.withUnsafeMutableBufferPointer { ProcessEnvironment.variables(of: $0.baseAddress!) }
        #expect(variables == ["A": "1", "B": "x=y=café", "EMPTY": ""])
    }

    @Test("current reads the process's environ")
    func readsTheProcessEnvironment() {
        #expect(ProcessEnvironment.current["PATH"] == getenv("PATH").map { String(cString: $0) })
    }
}
