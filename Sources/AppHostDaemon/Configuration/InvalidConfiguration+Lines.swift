import AppHost

extension InvalidConfiguration {
    /// What the command line prints: one line per problem kept, then how many there were
    /// when more than one, each starting with the command's name.
    func lines(commandName: String) -> [String] {
        var lines = errors.map { "\(commandName): \($0)" }
        if count > 1 {
            let file = first.file.map { " in \($0)" } ?? ""
            let shown = omitted > 0 ? " (the first \(errors.count) shown)" : ""
            lines.append("\(commandName): \(count) problems\(file)\(shown)")
        }
        return lines
    }
}
