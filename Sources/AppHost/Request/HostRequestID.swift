import Logging
import ServiceContextModule

/// The id of one request the host takes: a signal, a reload, a memory warning, a call of the
/// embedding program, the launch. Every hook of the request runs with it in the task-local
/// `ServiceContext` (`ServiceContext.current?.hostRequestID`), so the log lines of every
/// service (`request_id`, the journal's `REQUEST_ID=`), the bus messages published during the
/// request and the reports it caused carry it: `journalctl REQUEST_ID=…` shows everything one
/// `SIGUSR1` caused.
public enum HostRequestIDKey: ServiceContextKey {
    /// Sixteen lowercase hex digits, or whatever an embedding program put in its context.
    public typealias Value = String
    /// The metadata key and the name tracers see.
    public static var nameOverride: String? { "request_id" }
}

extension ServiceContext {
    /// The id of the host request this task works for; nil outside any request.
    public var hostRequestID: String? {
        get { self[HostRequestIDKey.self] }
        set { self[HostRequestIDKey.self] = newValue }
    }

    /// This context with a request id: its own if it has one, else a new one.
    static func forRequest(_ context: ServiceContext?) -> ServiceContext {
        var context = context ?? .topLevel
        if context.hostRequestID == nil { context.hostRequestID = makeHostRequestID() }
        return context
    }

    /// A new random request id: sixteen lowercase hex digits.
    static func makeHostRequestID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension Logger.MetadataProvider {
    /// `request_id`, and `cause` when the machine asked for it (`hostRequestCause`): the host
    /// request the logging task works for, from `ServiceContext.current`. Give it to the log
    /// handler (the daemon's journal handler has it) and every service's lines carry the request
    /// that caused them.
    public static let hostRequestID = Logger.MetadataProvider {
        guard let context = ServiceContext.current, let id = context.hostRequestID else { return [:] }
        guard let cause = context.hostRequestCause else { return ["request_id": .string(id)] }
        return ["request_id": .string(id), "cause": .string(cause)]
    }
}
