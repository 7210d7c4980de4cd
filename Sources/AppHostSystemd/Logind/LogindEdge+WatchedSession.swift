extension LogindEdge {
    /// Which logind session's screen lock the daemon follows (`host.logind-session`).
    public enum WatchedSession: Sendable, Equatable, CustomStringConvertible {
        /// A user unit's own user's display session; a system unit's seat0 active session.
        case auto
        /// This user's display session, else their newest.
        case user(String)
        /// The session with this id.
        case id(String)

        /// Reads `auto`, `user:NAME` or a session id; nil for anything else.
        public init?(_ text: String) {
            if text == "auto" {
                self = .auto
            } else if text.hasPrefix("user:") {
                let name = String(text.dropFirst(5))
                guard Self.isUserName(name) else { return nil }
                self = .user(name)
            } else if !text.isEmpty, text.count <= 64, text.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }) {
                self = .id(text)
            } else {
                return nil
            }
        }

        /// As the config writes it.
        public var description: String {
            switch self {
            case .auto: "auto"
            case .user(let name): "user:" + name
            case .id(let id): id
            }
        }

        static func isUserName(_ name: String) -> Bool {
            guard let first = name.unicodeScalars.first, name.count <= 32, first.isASCII, first.properties.isLowercase || first == "_" else { return false }
            return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isLowercase || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
        }
    }
}
