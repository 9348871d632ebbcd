/// Splits a command's arguments into positionals, flags and option values.
///
/// Accepts `--opt value`, `--opt=value`, repeated options where allowed, and `--` to end
/// options. Parsing is pure: arguments in, values or a `UsageError` out.
struct ArgumentScanner {
    struct Option {
        var name: String          // "--limit"
        var short: String? = nil  // "-n"
        var takesValue = false
        var repeatable = false
    }

    struct Result {
        var positionals: [String] = []
        var flags: Set<String> = []
        var values: [String: [String]] = [:]

        func value(_ name: String) -> String? { values[name]?.last }
        func has(_ name: String) -> Bool { flags.contains(name) }
    }

    let command: String
    let options: [Option]

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
            guard let option = options.first(where: { $0.name == name || $0.short == name }) else {
                throw UsageError(message: unknownOptionMessage(name), command: command)
            }
            if option.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                    // The next argument is the value unless it is itself a long option.
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError(message: "Missing value for '\(option.name) <\(Self.placeholder(option.name))>'.", command: command)
                }
                if !option.repeatable, result.values[option.name] != nil {
                    throw UsageError(message: "'\(option.name)' may be given only once.", command: command)
                }
                result.values[option.name, default: []].append(value)
            } else {
                if inlineValue != nil {
                    throw UsageError(message: "'\(option.name)' takes no value.", command: command)
                }
                result.flags.insert(option.name)
            }
        }
        return result
    }

    private func unknownOptionMessage(_ name: String) -> String {
        var message = "Unknown option '\(name)'."
        let candidates = options.map(\.name)
        if let best = candidates.min(by: { editDistance($0, name) < editDistance($1, name) }),
           editDistance(best, name) <= max(2, name.count / 3) {
            message += " Did you mean '\(best)'?"
        }
        return message
    }

    static func placeholder(_ name: String) -> String {
        switch name {
        case "--db": "path"
        case "--limit", "--max-bytes": "n"
        case "--ttl", "--timeout": "duration"
        case "--token-env": "var"
        default: String(name.dropFirst(2))
        }
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
