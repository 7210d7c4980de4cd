import ServiceContextModule

/// The requests that wait for the one in progress, oldest first, each with its context. A
/// request of a condition of the machine merges into the one of its condition that waits
/// (`HostRequest.merging(_:)`): it keeps that one's place and id, with both causes.
struct RequestQueue {
    private(set) var entries: [(request: HostRequest, context: ServiceContext)] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Queues `request`, or merges it into the waiting one of its condition.
    mutating func append(_ request: HostRequest, context: ServiceContext) {
        if let condition = request.condition,
            let position = entries.lastIndex(where: { $0.request.condition == condition }),
            let merged = entries[position].request.merging(request)
        {
            entries[position].request = merged
            entries[position].context.hostRequestCause = ServiceContext.combining(entries[position].context.hostRequestCause, context.hostRequestCause)
        } else {
            entries.append((request, context))
        }
    }

    /// The oldest request; the queue must not be empty.
    mutating func removeFirst() -> (request: HostRequest, context: ServiceContext) {
        entries.removeFirst()
    }

    /// Every waiting request, oldest first; the queue is empty after.
    mutating func removeAll() -> [HostRequest] {
        defer { entries = [] }
        return entries.map(\.request)
    }
}
