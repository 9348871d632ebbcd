/// Splits a command's arguments into positionals, flags and option values, by the command's
/// declaration in `CommandTable`.
///
/// Accepts `--opt value`, `--opt=value`, repeated options where declared, and `--` to end
/// options; enforces the declared required options and exclusive groups. Pure: arguments in,
/// values or a `UsageError` out.
struct ArgumentScanner {
    /// What was given: the positionals, the flags, and each option's values in order. Read
    /// by the command's declaration (`CommandDeclaration`), which lands each option's values
    /// where it is declared to: no option is looked up here by a name written twice.
    struct Result {
        var positionals: [String] = []
        var flags: Set<String> = []
        var values: [String: [String]] = [:]
    }

    let spec: CommandSpec

    init(_ spec: CommandSpec) { self.spec = spec }

    func scan(_ arguments: [String]) throws(UsageError) -> Result {
        var result = Result()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.option(name) else {
                throw UsageError(message: unknownOptionMessage(name), command: spec.name)
            }
            if option.valueIsOptional {
                // `--opt=VALUE`, or `--opt` alone: never the next word.
                if let inlineValue {
                    if !option.repeatable, result.values[option.name] != nil {
                        throw UsageError(message: "'\(option.name)' may be given only once.", command: spec.name)
                    }
                    result.values[option.name, default: []].append(inlineValue)
                } else {
                    result.flags.insert(option.name)
                }
            } else if let placeholder = option.value {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                    // The next argument is the value unless it is itself a long option.
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError(message: "Missing value for '\(option.name) <\(placeholder)>'.", command: spec.name)
                }
                if !option.repeatable, result.values[option.name] != nil {
                    throw UsageError(message: "'\(option.name)' may be given only once.", command: spec.name)
                }
                result.values[option.name, default: []].append(value)
            } else {
                if inlineValue != nil {
                    throw UsageError(message: "'\(option.name)' takes no value.", command: spec.name)
                }
                result.flags.insert(option.name)
            }
        }
        for group in spec.exclusive {
            let given = group.filter { result.flags.contains($0) || result.values[$0] != nil }
            if given.count > 1 {
                throw UsageError(message: "'\(given[0])' and '\(given[1])' cannot be used together.", command: spec.name)
            }
        }
        for name in spec.required where result.values[name] == nil {
            let placeholder = spec.option(name)?.value.map { " <\($0)>" } ?? ""
            throw UsageError(message: "Missing expected option '\(name)\(placeholder)'.", command: spec.name)
        }
        return result
    }

    private func unknownOptionMessage(_ name: String) -> String {
        var message = "Unknown option '\(name)'."
        let candidates = spec.options.map(\.name)
        if let best = candidates.min(by: { editDistance($0, name) < editDistance($1, name) }),
           editDistance(best, name) <= max(2, name.count / 3) {
            message += " Did you mean '\(best)'?"
        }
        return message
    }
}

/// Levenshtein distance, for "Did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
