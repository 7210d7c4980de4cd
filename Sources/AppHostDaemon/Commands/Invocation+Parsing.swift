import AppHost
import AppHostSystemd

extension Invocation {
    /// Parses `arguments` (without the program name). A path is taken as given, also when it
    /// is not UTF-8 (`RawPath`); a value that starts with `-` needs the `--config=FILE` form.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var rest = arguments[...]
        var subcommand = Subcommand.run
        var named = false
        if let first = rest.first {
            if first == "help" {
                rest = rest.dropFirst()
                guard let name = rest.popFirst() else { return .help(nil) }
                guard let target = Subcommand(rawValue: name) else { throw unknownSubcommand(name) }
                if let extra = rest.first { throw UsageError(message: "unexpected argument '\(extra)'", subcommand: nil) }
                return .help(target)
            }
            if let target = Subcommand(rawValue: first) {
                subcommand = target
                named = true
                rest = rest.dropFirst()
            } else if !first.hasPrefix("-") {
                throw unknownSubcommand(first)
            }
        }

        var values: [String: String] = [:]
        var positional: String?
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" { return .help(named ? subcommand : nil) }
            if argument == "--version", !named { return .version }
            var spelled = argument
            var attached: String?
            // The `=` by scalar, not by Character: a value that starts with a combining mark
            // joins the `=` into one Character (a fuzzer's finding).
            let scalars = argument.unicodeScalars
            if argument.hasPrefix("--"), let equals = scalars.firstIndex(of: "=") {
                spelled = String(scalars[..<equals])
                attached = String(scalars[scalars.index(after: equals)...])
            }
            guard let option = subcommand.options.first(where: { $0.name == spelled || $0.short == spelled }) else {
                guard argument.hasPrefix("-"), argument != "-" else {
                    if subcommand.argument != nil, positional == nil {
                        positional = argument
                        continue
                    }
                    throw UsageError(message: "unexpected argument '\(RawPath.displayed(argument))'", subcommand: subcommand)
                }
                var message = "unknown option '\(RawPath.displayed(spelled))' for \(subcommand.rawValue)"
                let names = subcommand.options.map(\.name) + (named ? [] : ["--version"]) + ["--help"]
                if let guess = Spelling.closest(to: spelled, in: names) { message += " (did you mean '\(guess)'?)" }
                throw UsageError(message: message, subcommand: subcommand)
            }
            guard values[option.name] == nil else {
                throw UsageError(message: "\(option.name) is given twice", subcommand: subcommand)
            }
            guard option.value != nil else {
                guard attached == nil else { throw UsageError(message: "\(option.name) takes no value", subcommand: subcommand) }
                values[option.name] = ""
                continue
            }
            let value: String
            if let attached {
                value = attached
            } else if let next = rest.first, !next.hasPrefix("-") {
                value = next
                rest = rest.dropFirst()
            } else {
                throw UsageError(message: "\(spelled) needs a value: \(option.usage)", subcommand: subcommand)
            }
            guard !value.isEmpty else {
                throw UsageError(message: "\(spelled) needs a value: \(option.usage)", subcommand: subcommand)
            }
            values[option.name] = value
        }

        let config = values[Option.config.name]
        if values[Option.user.name] != nil, values[Option.system.name] != nil {
            throw UsageError(message: "--user and --system exclude each other", subcommand: subcommand)
        }
        let bus: DBusAddress = values[Option.user.name] != nil ? .user : .system
        switch subcommand {
        case .run: return .run(config: config)
        case .check: return .check(config: config)
        case .services: return .services
        case .analytics:
            return .analytics(json: values[Option.json.name] != nil, config: config, stateDirectory: values[Option.stateDirectory.name])
        case .reload:
            return .reload(pid: values[Option.pid.name], config: config, stateDirectory: values[Option.stateDirectory.name])
        case .recordExit:
            return .recordExit(config: config, stateDirectory: values[Option.stateDirectory.name])
        case .status:
            return .status(json: values[Option.json.name] != nil, watch: values[Option.watch.name] != nil, bus: bus)
        case .restart:
            guard let positional else { throw UsageError(message: "restart needs the service's name: \(subcommand.rawValue) <service>", subcommand: subcommand) }
            return .restart(service: positional, bus: bus)
        }
    }

    private static func unknownSubcommand(_ name: String) -> UsageError {
        var message = "unknown subcommand '\(RawPath.displayed(name))'"
        let names = Subcommand.allCases.map(\.rawValue)
        if let guess = Spelling.closest(to: name, in: names + ["help"]) {
            message += " (did you mean '\(guess)'?)"
        } else {
            message += " (subcommands: \(names.joined(separator: ", ")))"
        }
        return UsageError(message: message, subcommand: nil)
    }
}

extension Invocation.Option {
    /// `--config <file>`, or `--json` for a flag.
    var usage: String {
        value.map { "\(name) <\($0)>" } ?? name
    }
}
