import Testing

/// The daemon's prelude takes systemd's fds with `sd_listen_fds_with_names` before any thread:
/// counted, named, close-on-exec (so no stored fd reaches a program the daemon starts) and out of
/// the environment. The probe links the same prelude and is started the way systemd starts it.
@Suite struct ListenFileDescriptorsTests {
    /// Opens fds 3 and 4 without close-on-exec and sets `$LISTEN_PID` to the probe's pid.
    private func probe(fds: String, names: String?) throws -> [String] {
        let namesLine = names.map { "LISTEN_FDNAMES='\($0)' " } ?? ""
        return try SystemdProbe.lines(["listen-fds"], shell: #"exec 3</dev/null 4</dev/null; LISTEN_PID=$$ LISTEN_FDS="# + fds + " " + namesLine + #"exec "$@""#)
    }

    @Test func ourFdsAreNamedMadeCloseOnExecAndTakenOutOfTheEnvironment() throws {
        #expect(try probe(fds: "2", names: "stray:apphost-state") == [
            "count=2 names=stray:apphost-state", "fd 3 cloexec=true", "fd 4 cloexec=true", "LISTEN_FDS=- LISTEN_FDNAMES=-",
        ])
    }

    @Test func fdsWithoutNamesAreUnknown() throws {
        #expect(try probe(fds: "1", names: nil).first == "count=1 names=unknown")
    }

    @Test("names that do not match the count (sd_listen_fds_with_names' EINVAL) keep the fds, named by position")
    func mismatchedNamesKeepTheFds() throws {
        #expect(try probe(fds: "2", names: "apphost-state") == [
            "count=2 names=apphost-state", "fd 3 cloexec=true", "fd 4 cloexec=true", "LISTEN_FDS=- LISTEN_FDNAMES=-",
        ])
    }

    @Test func anotherProcesssFdsAreLeftAlone() throws {
        let lines = try SystemdProbe.lines(["listen-fds"], shell: #"exec 3</dev/null; LISTEN_PID=1 LISTEN_FDS=1 exec "$@""#)
        #expect(lines.first == "count=0 names=-")
    }

    @Test func valuesThatAreNotCountsClaimNothing() throws {
        for value in ["1x", "", "-1", "0"] {
            let lines = try SystemdProbe.lines(["listen-fds"], shell: #"exec 3</dev/null; LISTEN_PID=$$ LISTEN_FDS=""# + value + #"" exec "$@""#)
            #expect(lines.first == "count=0 names=-", "LISTEN_FDS=\(value)")
        }
    }
}
