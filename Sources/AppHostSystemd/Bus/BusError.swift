import SystemPackage

/// Why a bus connection or a call on it failed, said so an operator knows what to fix.
package enum BusError: Error, Equatable, CustomStringConvertible {
    /// A system call failed at `step`.
    case system(step: String, Errno)
    /// The bus closed the connection at `step`.
    case ended(step: String)
    /// The bus did not answer `step` in time.
    case timedOut(step: String)
    /// The caller's wake fd stopped the wait (a shutdown).
    case cancelled
    /// The bus refused authentication.
    case rejected(String)
    /// A call's error reply: its D-Bus error name and message.
    case replied(name: String, message: String)
    /// Bytes that are not a D-Bus message.
    case malformed(String)
    /// An address this client cannot connect to.
    case unsupportedAddress(String)
    /// The process belongs to a user's bus, and nothing says where it is.
    case noUserBus

    package var description: String {
        switch self {
        case .system(let step, let errno): "\(step): \(SystemErrorText.reason(errno.rawValue))"
        case .ended(let step): "the bus closed the connection (\(step))"
        case .timedOut(let step): "the bus did not answer in time (\(step))"
        case .cancelled: "cancelled"
        case .rejected(let reply): "the bus refused this process's credentials (\(reply))"
        case .replied(let name, let message): message.isEmpty ? name : "\(name): \(message)"
        case .malformed(let what): "a malformed message from the bus: \(what)"
        case .unsupportedAddress(let address): "no unix: transport in the bus address \"\(address)\""
        case .noUserBus: "no user bus (a user's service, but neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)"
        }
    }
}
