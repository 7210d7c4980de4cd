/// A lifecycle change the host is asked for.
package enum LifecycleRequest: Sendable, Hashable {
    /// `active → inactive → background`.
    case enterBackground
    /// `background → inactive → active`.
    case enterForeground
    /// Background when active, foreground when in the background (SIGUSR1).
    case toggleBackground
}
