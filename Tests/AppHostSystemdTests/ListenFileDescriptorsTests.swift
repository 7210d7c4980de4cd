import CAppHostShims
import Glibc
import Testing

/// `apphost_claim_listen_fds`, which the daemon's prelude runs on `$LISTEN_PID`/`$LISTEN_FDS`
/// before any thread: the fds must not reach a program the daemon starts.
@Suite struct ListenFileDescriptorsTests {
    /// Opens pipes at `first`, `first + 1`, … (`count` of them) without close-on-exec, as systemd
    /// passes fds; returns the other ends to close.
    private func openWithoutCloseOnExec(at first: Int32, count: Int32) throws -> [Int32] {
        var others: [Int32] = []
        for fd in first..<(first + count) {
            try #require(fcntl(fd, F_GETFD) < 0, "fd \(fd) is taken")
            let pipe = try makePipe()
            #expect(dup2(pipe.read, fd) == fd)
            close(pipe.read)
            others.append(pipe.write)
        }
        return others
    }

    private func isCloseOnExec(_ fd: Int32) -> Bool {
        fcntl(fd, F_GETFD) & FD_CLOEXEC != 0
    }

    @Test func ourFdsBecomeCloseOnExecAndAreCounted() throws {
        let first: Int32 = 920
        let others = try openWithoutCloseOnExec(at: first, count: 2)
        defer { for fd in others + [first, first + 1] { close(fd) } }
        #expect(!isCloseOnExec(first))

        #expect(apphost_claim_listen_fds("\(getpid())", "2", getpid(), first) == 2)
        #expect(isCloseOnExec(first) && isCloseOnExec(first + 1))
    }

    @Test func countingStopsAtTheFirstFdThatIsNotOpen() throws {
        let first: Int32 = 930
        let others = try openWithoutCloseOnExec(at: first, count: 1)
        defer { for fd in others + [first] { close(fd) } }
        try #require(fcntl(first + 1, F_GETFD) < 0)

        #expect(apphost_claim_listen_fds("\(getpid())", "3", getpid(), first) == 1)
        #expect(isCloseOnExec(first))
    }

    @Test func anotherProcesssFdsAreLeftAlone() throws {
        let first: Int32 = 940
        let others = try openWithoutCloseOnExec(at: first, count: 1)
        defer { for fd in others + [first] { close(fd) } }

        #expect(apphost_claim_listen_fds("\(getpid() + 1)", "1", getpid(), first) == 0)
        #expect(!isCloseOnExec(first))
    }

    @Test func valuesThatAreNotCountsClaimNothing() throws {
        let first: Int32 = 950
        let others = try openWithoutCloseOnExec(at: first, count: 1)
        defer { for fd in others + [first] { close(fd) } }
        let pid = "\(getpid())"
        for (listenPID, listenFDs) in [(pid, "1x"), (pid, ""), (pid, "-1"), (pid, " 1"), (pid, "0"), ("", "1"), ("\(pid)abc", "1")] {
            #expect(apphost_claim_listen_fds(listenPID, listenFDs, getpid(), first) == 0, "LISTEN_PID=\(listenPID) LISTEN_FDS=\(listenFDs)")
        }
        #expect(apphost_claim_listen_fds(nil, "1", getpid(), first) == 0)
        #expect(apphost_claim_listen_fds(pid, nil, getpid(), first) == 0)
        #expect(!isCloseOnExec(first))
    }
}
