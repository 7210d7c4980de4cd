import AppHost

extension ConfigurationErrors {
    /// What the command line prints: one line per problem, then how many there were when more
    /// than one, each starting with the command's name.
    func lines(commandName: String) -> [String] {
        var lines = errors.map { "\(commandName): \($0)" }
        if errors.count > 1 {
            let file = first.file.map { " in \($0)" } ?? ""
            lines.append("\(commandName): \(errors.count) problems\(file)")
        }
        return lines
    }
}
