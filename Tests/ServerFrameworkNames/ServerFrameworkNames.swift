// Stand-ins for the top-level types that server frameworks export and that an application next
// to AppHost names unqualified: Hummingbird and Vapor both export `Application`, Vapor also
// `Request`, `Response` and `Environment`. A test that imports this module beside AppHost and
// uses these names compiles only while AppHost exports none of them.

/// Hummingbird's and Vapor's application type.
public struct Application: Sendable {
    public init() {}
}

/// Vapor's request type.
public struct Request: Sendable {
    public init() {}
}

/// Vapor's response type.
public struct Response: Sendable {
    public init() {}
}

/// Hummingbird's router.
public struct Router: Sendable {
    public init() {}
}

/// Vapor's environment.
public struct Environment: Sendable {
    public init() {}
}
