import CAppHostShims
import Glibc

/// Starts a detached OS thread for one blocking loop: the edge's sd-event loop
/// (`EdgeEventLoop`), its only user since the poll loops went.
///
/// Why a thread and not a Task: the loops block without a timeout, which would pin a
/// cooperative-pool thread forever; and a thread made with `pthread_create` inherits the creating
/// thread's signal mask, which the signal reader relies on. Why not Dispatch: a DispatchSource
/// signal source loses queued real-time signals (on Linux: 91 and 530 of 1,000 arrived, in two runs).
enum EdgeEventThread {
    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Runs `body` on a new detached thread named `name` (15 characters at most are kept).
    /// Returns 0 or the errno from `pthread_create`.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let context = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            apphost_set_current_thread_name(body.name)
            body.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return result
        }
        pthread_detach(thread)
        return 0
    }
}
