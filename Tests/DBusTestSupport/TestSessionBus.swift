import AppHostTestSupport
import Foundation

/// A private `dbus-daemon` for one test (Debian's `dbus` package), listening on a socket in a
/// fresh directory, so a test can run a `TestNotificationServer` and point a service at it with
/// `DBUS_SESSION_BUS_ADDRESS`.
public final class TestSessionBus: Sendable {
    /// The bus address, `unix:path=…` with the bus's `guid=`.
    public let address: String
    private let pid: pid_t
    private let directory: String

    /// The address without the bus's guid, as the system bus's is given: what still reaches a
    /// bus restarted on the same socket (`restarted()`).
    public var socketAddress: String { "unix:path=\(directory)/bus" }

    private init(address: String, pid: pid_t, directory: String) {
        self.address = address
        self.pid = pid
        self.directory = directory
    }

    /// Starts the bus and returns once it listens.
    /// - Parameter openToEveryUser: let any local user connect (the directory 0755, `<allow user="*"/>`),
    ///     for tests of what an unprivileged caller may do.
    /// - Parameter mayOwnNames: whether a client may own a name; `false` for tests of a daemon
    ///     whose bus policy does not let it.
    /// - Parameter activatable: names the bus would start on a call (its `servicedir`), each
    ///     with the shell command it runs: a test that the client never starts one sees the
    ///     command's traces absent.
    /// - Throws: `TestBusError` when `dbus-daemon` is missing or prints no address within
    ///   `timeout`.
    public static func start(dbusDaemon: String = "/usr/bin/dbus-daemon", timeout: Duration = .seconds(10), openToEveryUser: Bool = false, mayOwnNames: Bool = true, activatable: [String: String] = [:]) throws -> TestSessionBus {
        let directory: String
        do {
            directory = try makeTemporaryDirectory("apphost-test-bus")
        } catch {
            throw TestBusError(message: "cannot make a directory for the bus: \(error)")
        }
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              \(activatable.isEmpty ? "" : "<servicedir>\(directory)/services</servicedir>")
              <policy context="default">
                \(openToEveryUser ? "<allow user=\"*\"/>" : "")
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                \(mayOwnNames ? "<allow own=\"*\"/>" : "<deny own=\"*\"/>")
              </policy>
            </busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        if !activatable.isEmpty {
            try FileManager.default.createDirectory(atPath: directory + "/services", withIntermediateDirectories: true)
            for (name, command) in activatable {
                let escaped = command.replacingOccurrences(of: "'", with: "'\\''")
                try "[D-BUS Service]\nName=\(name)\nExec=/bin/sh -c '\(escaped)'\n".write(toFile: "\(directory)/services/\(name).service", atomically: true, encoding: .utf8)
            }
        }
        if openToEveryUser { chmod(directory, 0o755) }
        return try launch(dbusDaemon: dbusDaemon, directory: directory, timeout: timeout)
    }

    /// Kills the bus and starts a new one on the same socket, with the same policy, as
    /// `systemctl restart dbus` does: every connection to the old one is gone.
    public func restarted(dbusDaemon: String = "/usr/bin/dbus-daemon", timeout: Duration = .seconds(10)) throws -> TestSessionBus {
        killed()
        return try relaunched(dbusDaemon: dbusDaemon, timeout: timeout)
    }

    /// Kills the bus and removes its socket, keeping its directory: every connection is gone
    /// until `relaunched()`. Once only.
    public func killed() {
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        unlink(directory + "/bus")
    }

    /// A new bus on the socket of one `killed()`, with the same policy.
    public func relaunched(dbusDaemon: String = "/usr/bin/dbus-daemon", timeout: Duration = .seconds(10)) throws -> TestSessionBus {
        try Self.launch(dbusDaemon: dbusDaemon, directory: directory, timeout: timeout)
    }

    /// Starts `dbus-daemon` on `directory`'s bus.conf and returns once it listens.
    private static func launch(dbusDaemon: String, directory: String, timeout: Duration) throws -> TestSessionBus {        // posix_spawn rather than Foundation's Process, whose waitUntilExit spins on a
        // concurrency thread.
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw TestBusError(message: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let arguments = [dbusDaemon, "--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else {
            throw TestBusError(message: "cannot start \(dbusDaemon): \(String(cString: strerror(spawned))) (install Debian's dbus package)")
        }
        // The daemon prints its address once it listens: read up to the newline, or give up.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        while !bytes.contains(UInt8(ascii: "\n")) {
            var ready = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, milliseconds) > 0 else { break }
            let count = read(pipeEnds[0], &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let address = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard address.hasPrefix("unix:") else {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
            try? FileManager.default.removeItem(atPath: directory)
            throw TestBusError(message: "dbus-daemon printed no address within \(timeout): \(address)")
        }
        return TestSessionBus(address: address, pid: pid, directory: directory)
    }

    /// Stops the bus and removes its directory.
    public func stop() {
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
