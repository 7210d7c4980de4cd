import AppHostTestSupport
import Dispatch
import Foundation
import Glibc
import Logging
import Synchronization

/// Runs `body` on a new OS thread and waits for it, so signal-mask changes stay off the
/// Swift Testing pool threads (a thread made here is gone when `body` returns).
func onFreshThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    thread.start()
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A fresh directory under /tmp, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = try makeTemporaryDirectory("apphost-systemd-tests")
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
