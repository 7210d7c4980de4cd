/// Where the session-lock service reads its secret from.
enum SecretSource: Sendable, Hashable {
    /// No secret: locking still drives the protected-data events, there is just nothing to wipe.
    case none
    /// A systemd credential: `$CREDENTIALS_DIRECTORY/<name>`, from `LoadCredential=` in the unit.
    case credential(String)
    /// A file of its own.
    case file(String)

    /// Reads the secret; nil for `.none`. `environment` looks up variables.
    func load(environment: (String) -> String?) throws(SecretUnavailable) -> SessionSecret? {
        switch self {
        case .none:
            return nil
        case .credential(let name):
            guard let directory = environment("CREDENTIALS_DIRECTORY"), !directory.isEmpty else {
                throw SecretUnavailable(
                    path: "$CREDENTIALS_DIRECTORY/\(name)",
                    problem: "is not available because CREDENTIALS_DIRECTORY is not set",
                    fix: "add LoadCredential=\(name):/path/to/secret to the unit, or use secret-file"
                )
            }
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            do {
                return try SessionSecret.read(from: path, groupMayRead: true)
            } catch where error.problem == "does not exist" {
                throw SecretUnavailable(path: path, problem: "does not exist", fix: "add LoadCredential=\(name):/path/to/secret to the unit")
            }
        case .file(let path):
            return try SessionSecret.read(from: path)
        }
    }

    /// Where the secret lives, for logs.
    var location: String? {
        switch self {
        case .none: nil
        case .credential(let name): "$CREDENTIALS_DIRECTORY/\(name)"
        case .file(let path): path
        }
    }
}
