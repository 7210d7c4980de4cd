import Logging
import ServiceContextModule

/// Why the machine asked for a request, when it was not an operator or the embedding program:
/// `sleep`, `resume`, `shutdown` (logind's `PrepareForSleep` and `PrepareForShutdown`),
/// `screen-lock`. It rides in the request's `ServiceContext` beside its id, so a hook, a log line
/// (the journal's `CAUSE=`), the `LifecycleEventRecord` and the status tell a sleep from a
/// `SIGUSR1`. Nil for a signal or a call of the program.
public enum HostRequestCauseKey: ServiceContextKey {
    /// A short lowercase word.
    public typealias Value = String
    /// The metadata key and the name tracers see.
    public static var nameOverride: String? { "cause" }
}

extension ServiceContext {
    /// Why the machine asked for the host request this task works for; nil when nobody but an
    /// operator or the program did.
    public var hostRequestCause: String? {
        get { self[HostRequestCauseKey.self] }
        set { self[HostRequestCauseKey.self] = newValue }
    }

    /// The causes of two requests merged into one (`cause`, `cause,other`): each once, in the
    /// order they came; nil when neither had one.
    package static func combining(_ first: String?, _ second: String?) -> String? {
        var causes: [Substring] = []
        for cause in [first, second].compactMap({ $0 }).flatMap({ $0.split(separator: ",") }) where !causes.contains(cause) {
            causes.append(cause)
        }
        return causes.isEmpty ? nil : causes.joined(separator: ",")
    }
}
