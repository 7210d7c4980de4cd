import AppHost
import AppHostDaemon
import AppHostServices
import AppHostSystemd
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The readers of what the process is started with: its environment, its command line, and the
/// session secret a unit hands it.
extension FuzzTarget {
    /// `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE` as start-up resolves them. The
    /// first byte picks the watch path among harmless ones (a write goes only to /dev/zero, a
    /// FIFO of the target's or a regular file, which is refused); the rest is the write variable.
    static func memoryPressure(_ bytes: [UInt8]) {
        let encoded = String(decoding: bytes.dropFirst(), as: UTF8.self)
        if let decoded = MemoryPressureSource.decodeWrite(encoded) {
            let again = MemoryPressureSource.decodeWrite(Data(decoded).base64EncodedString())
            precondition(again == decoded, "memory pressure: MEMORY_PRESSURE_WRITE does not decode its own encoding back")
        }
        let watches = [nil, "", "/dev/null", "/dev/zero", FuzzScratch.fifo("pressure"), FuzzScratch.directory("pressure") + "/regular", "/nonexistent/memory.pressure"]
        var environment: [String: String] = ["MEMORY_PRESSURE_WRITE": encoded]
        if let first = bytes.first, let watch = watches[Int(first) % watches.count] { environment["MEMORY_PRESSURE_WATCH"] = watch }
        guard environment["MEMORY_PRESSURE_WATCH"] != nil else { return }
        switch MemoryPressureSource.resolve(environment: environment, thresholds: .init()) {
        case .watching(let endpoints, let description):
            precondition(!description.isEmpty, "memory pressure: a source without a description")
            for endpoint in endpoints { close(endpoint.fd) }
        case .off(let reason, _):
            precondition(!reason.isEmpty, "memory pressure: turned off without a reason")
        }
    }

    /// The command line: NUL-separated arguments, each read as `main` reads argv. A command that
    /// parses keeps every path byte for byte, and its canonical spelling parses to itself.
    static func commandLine(_ bytes: [UInt8]) {
        let raw = bytes.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
        let arguments = raw.map(RawPath.decode)
        for (argument, original) in zip(arguments, raw) {
            precondition(RawPath.bytes(argument) == original, "command line: an argument does not keep its bytes")
        }
        let command: Invocation
        do {
            command = try Invocation.parse(arguments)
        } catch {
            precondition(!error.message.isEmpty, "command line: a usage error without a message")
            precondition(Invocation.report(error, identity: .apphostd).contains(error.message), "command line: the report leaves out the error")
            return
        }
        let spelled = canonicalArguments(command)
        let again = try? Invocation.parse(spelled)
        precondition(again == command, "command line: \(spelled) does not parse back to \(command)")
    }

    /// The session secret, as the session-lock service reads its file: an accepted secret holds
    /// exactly the file's bytes; a refusal says what is wrong and what to do.
    static func sessionSecret(_ bytes: [UInt8]) {
        let path = FuzzScratch.directory("secret") + "/secret"
        FuzzScratch.write(bytes, to: path)
        do {
            let secret = try SessionSecret.read(from: path)
            precondition(secret.count == bytes.count, "session secret: read \(secret.count) of \(bytes.count) bytes")
            secret.wipe()
            precondition(secret.count == 0, "session secret: a wipe left bytes")
        } catch {
            precondition(bytes.isEmpty || bytes.count > SessionSecret.sizeLimit, "session secret: a readable file of \(bytes.count) bytes refused: \(error)")
            precondition(!error.problem.isEmpty && !error.fix.isEmpty, "session secret: a refusal without a problem or a fix")
        }
    }

    private static func busFlag(_ bus: DBusAddress) -> [String] {
        switch bus {
        case .user: [Invocation.Option.user.name]
        case .system, .default, .address: []
        }
    }

    /// Options in the `--name=value` form, which takes any value; the names are the parser's own.
    private static func canonicalArguments(_ command: Invocation) -> [String] {
        func option(_ option: Invocation.Option, _ value: String?) -> [String] { value.map { ["\(option.name)=\($0)"] } ?? [] }
        switch command {
        case .run(let config): return ["run"] + option(.config, config)
        case .check(let config): return ["check"] + option(.config, config)
        case .services: return ["services"]
        case .analytics(let json, let config, let state):
            return ["analytics"] + (json ? [Invocation.Option.json.name] : []) + option(.config, config) + option(.stateDirectory, state)
        case .reload(let pid, let config, let state):
            return ["reload"] + option(.pid, pid) + option(.config, config) + option(.stateDirectory, state)
        case .recordExit(let config, let state): return ["record-exit"] + option(.config, config) + option(.stateDirectory, state)
        case .status(let json, let watch, let bus):
            return ["status"] + (json ? [Invocation.Option.json.name] : []) + (watch ? [Invocation.Option.watch.name] : []) + busFlag(bus)
        case .restart(let service, let bus): return ["restart", service] + busFlag(bus)
        case .help(let subcommand): return ["help"] + (subcommand.map { [$0.rawValue] } ?? [])
        case .version: return ["--version"]
        }
    }
}
