import AppHost
import CAppHostShims
import Glibc

/// A Linux signal that apphostd turns into a lifecycle transition (the signal map is in README.md).
///
/// Standard signals coalesce in the kernel, so the toggle (`SIGUSR1`) can lose a flip under a storm;
/// the explicit real-time transitions queue and are idempotent.
public enum LifecycleSignal: Sendable, Hashable, CustomStringConvertible {
    /// `SIGTERM` or `SIGINT`: terminate gracefully. Carries which one, for the log.
    case terminate(signal: Int32)
    /// `SIGUSR1`: flip between background and foreground.
    case toggleBackground
    /// `SIGHUP`: reload the configuration as one transaction.
    case reload
    /// `SIGRTMIN+1`: go to the background (idempotent, queued).
    case enterBackground
    /// `SIGRTMIN+2`: come to the foreground (idempotent, queued).
    case enterForeground
    /// `SIGRTMIN+18`: trim memory, the number systemd's own daemons use; delivers a critical memory warning.
    case trimMemory

    /// The runtime value of `SIGRTMIN`; Swift cannot import the C macro, so it comes from the C shim.
    public static var sigrtmin: Int32 { apphost_sigrtmin() }

    /// Every signal number apphostd reads; the same set the C prelude blocks before main.
    public static var allSignalNumbers: [Int32] {
        [SIGTERM, SIGINT, SIGHUP, SIGUSR1, sigrtmin + 1, sigrtmin + 2, sigrtmin + 18]
    }

    /// Maps a signal number to its lifecycle meaning; nil for signals apphostd does not handle.
    public init?(signalNumber: Int32) {
        switch signalNumber {
        case SIGTERM, SIGINT: self = .terminate(signal: signalNumber)
        case SIGUSR1: self = .toggleBackground
        case SIGHUP: self = .reload
        case Self.sigrtmin + 1: self = .enterBackground
        case Self.sigrtmin + 2: self = .enterForeground
        case Self.sigrtmin + 18: self = .trimMemory
        default: return nil
        }
    }

    /// The signal number that requests this transition (for `.terminate`, the one that was received).
    public var signalNumber: Int32 {
        switch self {
        case .terminate(let signal): signal
        case .toggleBackground: SIGUSR1
        case .reload: SIGHUP
        case .enterBackground: Self.sigrtmin + 1
        case .enterForeground: Self.sigrtmin + 2
        case .trimMemory: Self.sigrtmin + 18
        }
    }

    /// The conventional name, e.g. `SIGTERM` or `SIGRTMIN+1`, as `kill -s` and the README spell it.
    public var name: String { Self.name(of: signalNumber) }

    public var description: String { name }

    /// The conventional name of any signal number, used in logs and error messages.
    public static func name(of signalNumber: Int32) -> String {
        switch signalNumber {
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        case SIGHUP: return "SIGHUP"
        case SIGUSR1: return "SIGUSR1"
        case SIGUSR2: return "SIGUSR2"
        case SIGQUIT: return "SIGQUIT"
        case SIGKILL: return "SIGKILL"
        default:
            let min = sigrtmin
            let max = apphost_sigrtmax()
            if signalNumber == min { return "SIGRTMIN" }
            if signalNumber > min && signalNumber <= max { return "SIGRTMIN+\(signalNumber - min)" }
            return "signal \(signalNumber)"
        }
    }
}
