import Logging
import ServiceLifecycle

extension PluggableApplicationHost: Service {
    /// Launches, runs each service's `run` loop beside the lifecycle, and terminates on
    /// `terminate()`, on a graceful shutdown of the enclosing `ServiceGroup`, or on cancellation.
    ///
    /// - Throws: `LaunchFailure` when launch failed (after its rollback).
    public func run() async throws {
        let (requests, continuation) = AsyncStream<RunLoopRequest>.makeStream()
        runLoopRequests = continuation
        defer { runLoopRequests = nil }
        do {
            try await launch()
        } catch {
            continuation.finish()
            throw error
        }
        let lockChanges = bus.subscribe(to: SessionLockDidChange.self)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await change in lockChanges {
                    _ = try? await self.setSessionLocked(change.isLocked, reason: change.reason)
                }
            }
            await withGracefulShutdownHandler {
                for await request in requests {
                    switch request {
                    case .start(let slot):
                        group.addTask { await Self.runLoop(of: slot) }
                    case .terminate:
                        await self.terminate()
                    }
                }
            } onGracefulShutdown: {
                continuation.yield(.terminate)
            }
            if self.machine.state.isRunning {
                // Cancelled from outside: services still get their last call.
                await self.terminate()
            }
            group.cancelAll()
        }
    }

    /// Runs a service's `run` until it returns or the service is stopped.
    static func runLoop(of slot: ServiceSlot) async {
        let application = slot.application
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await slot.service.run(application)
                } catch is CancellationError {
                } catch {
                    application.logger.error("run loop ended with an error: \(error)")
                }
            }
            group.addTask { await slot.waitUntilStopped() }
            await group.next()
            group.cancelAll()
        }
    }
}
