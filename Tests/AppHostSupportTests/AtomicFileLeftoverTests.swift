@testable import AppHostSupport
import AppHostTestSupport
import Foundation
import Glibc
import Testing


/// What killed writes leave in a state directory is removed at the next start, whoever wrote it
/// (the launch state, the restorable state, the last reload's record, analytics).
@Suite struct AtomicFileLeftoverTests {
    @Test("every NAME.tmp-PID of a dead writer goes; a live writer's, other names and the files themselves stay")
    func leftoversInADirectory() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = exitedProcessID()
        try #require(child > 0)
        let dead = ["last-reload.json.tmp-\(child)", "restorable-state.tmp-\(child)", "a.b.tmp-\(child)"]
        let kept = ["last-reload.json.tmp-1", "last-reload.json", "notes.tmp-x", ".tmp-\(child)", "x.tmp-"]
        for name in dead + kept { #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("{".utf8))) }

        let removed = AtomicFile.removeLeftovers(inDirectory: directory)
        #expect(removed.sorted() == dead.sorted())
        let left = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(left.sorted() == kept.sorted())
    }

    @Test("a temporary name is the file's name, .tmp-, and a pid", arguments: [
        ("state.json.tmp-42", "state.json", Int32(42)),
        ("a.tmp-b.tmp-7", "a.tmp-b", 7),
        ("state.json", nil, nil),
        ("state.tmp-", nil, nil),
        ("state.tmp-0", nil, nil),
        ("state.tmp-12x", nil, nil),
        (".tmp-5", nil, nil),
    ])
    func temporaryNames(_ name: String, _ file: String?, _ pid: Int32?) {
        let parsed = AtomicFile.temporaryName(name)
        #expect(parsed?.file == file)
        #expect(parsed?.pid == pid)
    }
}
