@testable import AppHostSupport
import AppHostTestSupport
import Foundation
import Testing

@Suite struct StateDirectoryLockTests {
    @Test("the lock file holds exactly the owner's PID, also over a longer one an earlier owner left")
    func lockFileHoldsTheOwnersPID() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/lock"
        try "4194304999\n".write(toFile: path, atomically: false, encoding: .utf8)
        let lock = try StateDirectoryLock(directory: directory)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")

        // A second taker in the same process gets its own open file description: refused,
        // naming this process as the owner.
        #expect {
            _ = try StateDirectoryLock(directory: directory)
        } throws: { error in
            guard case .held(_, let owner)? = error as? StateDirectoryLock.Failure else { return false }
            return owner == getpid()
        }
        withExtendedLifetime(lock) {}
    }
}
