import AppHost
import Logging
import Subprocess
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Running the program: one process per event, its output to the journal, a timeout.
extension ExecService {
    /// Runs the program to completion or until the timeout, streaming its output to `logger`.
    public static func execute(executable: String, settings: Settings, environment: [String: String], logger: Logger, event: String) async throws -> Outcome {
        let options = {
            var options = PlatformOptions()
            // Its own session and process group, so the timeout also reaches what it started.
            options.createSession = true
            options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: settings.grace)]
            return options
        }()
        // The child leads a process group of its own (its session), and every process of the run
        // inherits a marker; after a timeout the group is killed, even when its leader already
        // exited, and so is every marked process that left the group.
        let processes = RunProcesses()
        defer { processes.killIfKept() }
        let updates = Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) })
            .merging([Environment.Key(stringLiteral: RunProcesses.markerName): processes.marker]) { $1 }
        let arguments = Arguments(Array(settings.arguments.dropFirst()))
        let workingDirectory = settings.workingDirectory.map { FilePath($0) }

        enum Finish: Sendable {
            case ran(TerminationStatus)
            case timedOut
        }
        let timeout = settings.timeout
        return try await withThrowingTaskGroup(of: Finish.self) { group in
            group.addTask {
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: arguments, environment: .inherit.updating(updates),
                    workingDirectory: workingDirectory, platformOptions: options,
                    input: .none, output: .sequence, error: .sequence
                ) { execution in
                    processes.keep(execution.processIdentifier.value)
                    return try await withThrowingTaskGroup(of: Void.self) { readers in
                        readers.addTask {
                            do {
                                for try await line in execution.standardOutput.strings() {
                                    logger.info("\(line.droppingLineBreak)", metadata: ["stream": "stdout", "event": "\(event)"])
                                }
                            } catch is CancellationError {
                                throw CancellationError()
                            } catch {
                                logger.warning("stopped reading stdout: \(error)", metadata: ["stream": "stdout", "event": "\(event)"])
                            }
                        }
                        readers.addTask {
                            do {
                                for try await line in execution.standardError.strings() {
                                    logger.warning("\(line.droppingLineBreak)", metadata: ["stream": "stderr", "event": "\(event)"])
                                }
                            } catch is CancellationError {
                                throw CancellationError()
                            } catch {
                                logger.warning("stopped reading stderr: \(error)", metadata: ["stream": "stderr", "event": "\(event)"])
                            }
                        }
                        try await readers.waitForAll()
                    }
                }
                return .ran(result.terminationStatus)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return .timedOut
            }
            do {
                let first = try await group.next()!
                if case .ran(let status) = first {
                    group.cancelAll()
                    // Ended on its own: what it started in the background is its business.
                    processes.forget()
                    return outcome(status, timedOut: false)
                }
            } catch is CancellationError {
                group.cancelAll()
                throw CancellationError()
            }
            // Timed out: cancelling the run makes swift-subprocess send SIGTERM to the process
            // group, wait the grace period, then SIGKILL, and reap the child.
            group.cancelAll()
            while let next = try? await group.next() {
                if case .ran(let status) = next { return outcome(status, timedOut: true) }
            }
            return Outcome(exitCode: nil, signal: nil, timedOut: true)
        }
    }

    private static func outcome(_ status: TerminationStatus, timedOut: Bool) -> Outcome {
        switch status {
        case .exited(let code): Outcome(exitCode: Int32(code), signal: nil, timedOut: timedOut)
        case .signaled(let signal): Outcome(exitCode: nil, signal: Int32(signal), timedOut: timedOut)
        }
    }
}
