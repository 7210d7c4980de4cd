import CSystemd
import Glibc

/// Which logind session is whose, as sd-login reads it from logind's files under
/// `/run/systemd` (no bus call, no wait): a user's display session and sessions, seat0's active
/// session, whether a session exists. The tests give lookups of their own, since a bus fake
/// cannot fake those files.
package struct LoginSessionLookup: Sendable {
    /// `sd_uid_get_display`: the user's graphical session, if any.
    package var display: @Sendable (uid_t) -> String?
    /// `sd_uid_get_sessions`: the user's sessions, newest first (logind lists them so).
    package var sessions: @Sendable (uid_t) -> [String]
    /// `sd_seat_get_active`: the seat's active session, if any.
    package var activeSession: @Sendable (_ seat: String) -> String?
    /// `sd_session_get_state`: whether logind knows the session.
    package var exists: @Sendable (_ session: String) -> Bool

    /// The lookups as given.
    package init(
        display: @escaping @Sendable (uid_t) -> String?, sessions: @escaping @Sendable (uid_t) -> [String],
        activeSession: @escaping @Sendable (String) -> String?, exists: @escaping @Sendable (String) -> Bool
    ) {
        (self.display, self.sessions, self.activeSession, self.exists) = (display, sessions, activeSession, exists)
    }

    /// sd-login's.
    package static let sdLogin = LoginSessionLookup(
        display: { uid in
            var session: UnsafeMutablePointer<CChar>?
            defer { free(session) }
            return sd_uid_get_display(uid, &session) >= 0 ? session.map { String(cString: $0) } : nil
        },
        sessions: { uid in
            var list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            let count = sd_uid_get_sessions(uid, 0, &list)
            defer {
                for index in 0..<max(0, Int(count)) { free(list?[index]) }
                free(list)
            }
            guard count > 0, let list else { return [] }
            return (0..<Int(count)).compactMap { list[$0].map { String(cString: $0) } }
        },
        activeSession: { seat in
            var session: UnsafeMutablePointer<CChar>?
            defer { free(session) }
            return sd_seat_get_active(seat, &session, nil) >= 0 ? session.map { String(cString: $0) } : nil
        },
        exists: { session in
            var state: UnsafeMutablePointer<CChar>?
            defer { free(state) }
            return sd_session_get_state(session, &state) >= 0
        }
    )

    /// The session `watched` names now, or why there is none. `user` is `user:NAME`'s uid (nil:
    /// no such user); a user unit's `auto` is its own user's.
    func session(for watched: LogindEdge.WatchedSession, user: uid_t?, runsAsUserUnit: Bool) -> Result<String, NoSession> {
        switch watched {
        case .id(let id):
            return exists(id) ? .success(id) : .failure(NoSession(reason: "no session \(id)"))
        case .user(let name):
            guard let user else { return .failure(NoSession(reason: "no user \(name) on this machine")) }
            return session(of: user)
        case .auto where runsAsUserUnit:
            return session(of: getuid())
        case .auto:
            return activeSession("seat0").map { .success($0) } ?? .failure(NoSession(reason: "no active session on seat0"))
        }
    }

    /// The user's display session, else their newest.
    private func session(of user: uid_t) -> Result<String, NoSession> {
        if let session = display(user) ?? sessions(user).first { return .success(session) }
        return .failure(NoSession(reason: "that user has no session"))
    }

    /// Why no session is followed.
    struct NoSession: Error {
        let reason: String
    }

    /// Which of logind's files say that the answer may have changed (`sd_login_monitor_new`'s
    /// category): only those, since sd-login's monitor wakes on each rewrite of one.
    static func monitorCategory(for watched: LogindEdge.WatchedSession, runsAsUserUnit: Bool) -> String {
        switch watched {
        case .id: "session"
        case .user: "uid"
        case .auto: runsAsUserUnit ? "uid" : "seat"
        }
    }
}
