import FoundationEssentials
import OfflineCache

/// How an option's text becomes its value, or the usage error that says what it should be;
/// `show` writes a value back as the command line takes it (a default, in help).
struct ValueParser<Value>: @unchecked Sendable {
    let parse: (_ text: String, _ option: String, _ command: String) throws(UsageError) -> Value
    var show: ((Value) -> String)?

    /// `Invalid value 'x' for '--opt': expected ….`
    static func invalid(_ text: String, _ option: String, _ expected: String, _ command: String) -> UsageError {
        UsageError(message: "Invalid value '\(text)' for '\(option)': expected \(expected).", command: command)
    }
}

extension ValueParser where Value == String {
    /// The text as given.
    static var text: ValueParser { ValueParser(parse: { text, _, _ in text }, show: { $0 }) }

    /// One of `choices`.
    static func choice(_ choices: [String]) -> ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            guard choices.contains(text) else {
                throw invalid(text, option, choices.dropLast().joined(separator: ", ") + " or " + choices.last!, command)
            }
            return text
        }, show: { $0 })
    }

    /// A moment, in the stored form: a time, or how long ago (`Moment.parse`).
    static var moment: ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            switch Result(catching: { () throws(Moment.Unreadable) in try Moment.parse(text) }) {
            case .success(let moment):
                return moment
            case .failure(.expected(let expected)):
                throw invalid(text, option, expected, command)
            case .failure(.future):
                throw UsageError(message: "'\(text)' for '\(option)' is in the future: the cache knows what was, not what will be.", command: command)
            }
        })
    }
}

extension ValueParser where Value: FixedWidthInteger {
    /// A whole number, 1 or more (0 would print nothing and then say there is nothing).
    static var count: ValueParser { number(1...Int.max, "a whole number, 1 or more") }

    /// A whole number in `range`.
    static func number(_ range: ClosedRange<Int>, _ expected: String) -> ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            guard let number = Int(text), range.contains(number), let value = Value(exactly: number) else {
                throw invalid(text, option, expected, command)
            }
            return value
        }, show: { String($0) })
    }
}

extension ValueParser where Value == Double {
    /// A duration, in seconds (`--timeout 30s`).
    static var seconds: ValueParser {
        let whole = ValueParser<Int>.duration()
        return ValueParser(parse: { text, option, command throws(UsageError) in Double(try whole.parse(text, option, command)) },
                           show: { DurationText.format(Int($0)) })
    }
}

extension ValueParser where Value == Int {
    /// A duration, in seconds (`30s`, `5m`, `2h`, `1d`); with `zero`, `0` too.
    static func duration(zero: Bool = false) -> ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            if zero, ["0", "0s"].contains(text) { return 0 }
            guard let seconds = DurationText.seconds(text) else {
                throw invalid(text, option, "a duration such as \(CommandTable.durationHelp)", command)
            }
            return seconds
        }, show: { DurationText.format($0) })
    }
}

/// One option of a command whose parsed form is `Parsed`, declared once: what help, usage, the
/// completions and the man page show of it (`spec`), and where its value lands (`land`, given
/// every value given for it, in order; none for a flag). A default is the `Parsed` start value,
/// shown in help from there.
struct Option<Parsed>: @unchecked Sendable {
    let spec: OptionSpec
    let land: (inout Parsed, _ values: [String], _ command: String) throws(UsageError) -> Void
    /// The default as help shows it, read from the start value; nil for none.
    var shownDefault: ((Parsed) -> String?)? = nil

    /// A flag that sets `path`.
    static func flag(_ name: String, short: String? = nil, help: String, _ path: WritableKeyPath<Parsed, Bool>) -> Option {
        Option(spec: OptionSpec(name: name, short: short, help: help)) { parsed, _, _ in parsed[keyPath: path] = true }
    }

    /// A flag that does what `sets` does (`--json`: the format is JSON).
    static func flag(_ name: String, short: String? = nil, help: String, sets: @escaping (inout Parsed) -> Void) -> Option {
        Option(spec: OptionSpec(name: name, short: short, help: help)) { parsed, _, _ in sets(&parsed) }
    }

    /// An option with a value, which lands in `path` (nil when it is not given).
    static func value<Value>(_ name: String, _ placeholder: String, help: String, completion: Completion = .none,
                             _ path: WritableKeyPath<Parsed, Value?>, _ parser: ValueParser<Value>) -> Option {
        Option(spec: OptionSpec(name: name, value: placeholder, help: help, completion: completion)) { parsed, values, command throws(UsageError) in
            parsed[keyPath: path] = try parser.parse(values.last!, name, command)
        }
    }

    /// An option with a value and a default (the start value's, shown in help).
    static func value<Value>(_ name: String, _ placeholder: String, help: String, completion: Completion = .none,
                             _ path: WritableKeyPath<Parsed, Value>, _ parser: ValueParser<Value>) -> Option {
        Option(spec: OptionSpec(name: name, value: placeholder, help: help, completion: completion),
               land: { parsed, values, command throws(UsageError) in parsed[keyPath: path] = try parser.parse(values.last!, name, command) },
               shownDefault: { parsed in parser.show.map { $0(parsed[keyPath: path]) } })
    }

    /// An option whose value may be left out (`--wait`, `--wait=30s`): given alone it lands
    /// `bare`; its value is given only as `--opt=VALUE`.
    static func optionalValue<Value>(_ name: String, _ placeholder: String, help: String, bare: Value,
                                     _ path: WritableKeyPath<Parsed, Value?>, _ parser: ValueParser<Value>) -> Option {
        Option(spec: OptionSpec(name: name, value: placeholder, help: help, valueIsOptional: true)) { parsed, values, command throws(UsageError) in
            parsed[keyPath: path] = try values.last.map { text throws(UsageError) in try parser.parse(text, name, command) } ?? bare
        }
    }

    /// A repeatable option: each value given (each part of a comma-separated list, with
    /// `lists`) appended to `path`, in order.
    static func values<Value>(_ name: String, _ placeholder: String, help: String, lists: Bool = false,
                              _ path: WritableKeyPath<Parsed, [Value]>, _ parser: ValueParser<Value>) -> Option {
        Option(spec: OptionSpec(name: name, value: placeholder, repeatable: true, help: help)) { parsed, values, command throws(UsageError) in
            let parts = lists ? values.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces() } } : values
            for part in parts { parsed[keyPath: path].append(try parser.parse(part, name, command)) }
        }
    }

    /// The spec as help shows it for a command that starts from `start`: its default added.
    func shown(from start: Parsed) -> OptionSpec {
        guard let text = shownDefault?(start) else { return spec }
        var spec = spec
        let ended = spec.help.hasSuffix(".")
        spec.help = (ended ? String(spec.help.dropLast()) : spec.help) + " (default: \(text))" + (ended ? "." : "")
        return spec
    }
}

/// A command, declared once: what help, usage, the completions and the man page show
/// (`spec`), and how its arguments become a `Command` (`parse`): scanned by the spec, each option
/// given landed where it is declared to, then the positionals and the checks across options.
struct CommandDeclaration: @unchecked Sendable {
    let spec: CommandSpec
    let parse: (_ arguments: [String]) throws(UsageError) -> Command

    init<Parsed>(_ spec: CommandSpec, start: Parsed, options: [Option<Parsed>],
                 make: @escaping (inout Parsed, _ positionals: [String], _ command: String) throws(UsageError) -> Command) {
        var spec = spec
        spec.options = options.map { $0.shown(from: start) } + spec.options
        self.spec = spec
        let scanned = spec
        parse = { arguments throws(UsageError) in
            let result = try ArgumentScanner(scanned).scan(arguments)
            var parsed = start
            for option in options {
                if let values = result.values[option.spec.name] {
                    try option.land(&parsed, values, scanned.name)
                } else if result.flags.contains(option.spec.name) {
                    try option.land(&parsed, [], scanned.name)
                }
            }
            return try make(&parsed, result.positionals, scanned.name)
        }
    }

    /// A command with no options of its own.
    init(_ spec: CommandSpec, make: @escaping (_ positionals: [String], _ command: String) throws(UsageError) -> Command) {
        self.init(spec, start: (), options: [Option<Void>]()) { _, positionals, command throws(UsageError) in try make(positionals, command) }
    }
}

/// What the declarations share: the positionals a command takes.
enum Positionals {
    static func none(_ positionals: [String], _ command: String) throws(UsageError) {
        if let first = positionals.first {
            throw UsageError(message: "Unexpected argument '\(first)'.", command: command)
        }
    }

    static func exactlyOne(_ positionals: [String], _ label: String, _ command: String) throws(UsageError) -> String {
        guard let first = positionals.first else {
            throw UsageError(message: "Missing expected argument '\(label)'.", command: command)
        }
        guard positionals.count == 1 else {
            throw UsageError(message: "Unexpected argument '\(positionals[1])'.", command: command)
        }
        return first
    }

    static func atMostOne(_ positionals: [String], _ command: String) throws(UsageError) -> String? {
        if positionals.count > 1 { throw UsageError(message: "Unexpected argument '\(positionals[1])'.", command: command) }
        return positionals.first
    }

    /// Exactly two (`<name> <key>`), each missing one named.
    static func two(_ positionals: [String], _ labels: (String, String), _ command: String, extra: String = "") throws(UsageError) -> (String, String) {
        guard positionals.count == 2 else {
            throw UsageError(message: positionals.count < 2 ? "Missing expected argument '\(positionals.isEmpty ? labels.0 : labels.1)'."
                                                            : "Unexpected argument '\(positionals[2])'\(extra).", command: command)
        }
        return (positionals[0], positionals[1])
    }
}

// MARK: What the declarations parse into, where no `Command` case has a struct of its own

/// `sources add`: the kind beside the settings.
struct SourceAdding {
    var kind: SourceKind?
    var settings = SourceSettings()
}

/// The options of the small commands, each where it lands: `--json`, `--yes`, `--limit`,
/// `metrics --textfile`'s path, `prune --keep`'s seconds.
struct Printing {
    var json = false
    var yes = false
    var limit: Int?
    var path: String?
    var keep: Int?
}

/// `diff`: one run, or the runs of a while.
struct Diffing {
    var run: Int?
    var since: Int?
    var json = false
}

extension ValueParser where Value == SourceKind {
    /// One of the kinds.
    static var kind: ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            guard let kind = SourceKind(rawValue: text) else {
                let kinds = SourceKind.allCases.map(\.rawValue)
                throw invalid(text, option, kinds.dropLast().joined(separator: ", ") + " or " + kinds.last!, command)
            }
            return kind
        })
    }
}

extension ValueParser where Value == [String] {
    /// Names separated by commas (`--columns id,name`; an empty item between two commas is
    /// passed over), none of them blank.
    static var fieldNames: ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            let names = text.split(separator: ",").map { $0.trimmingSpaces() }
            guard !names.isEmpty, !names.contains("") else { throw invalid(text, option, "field names separated by commas", command) }
            return names
        })
    }
}

extension ValueParser where Value == String {
    /// The name of an environment variable (`CACHE_SERVE_TOKEN`).
    static var variableName: ValueParser {
        ValueParser(parse: { text, option, command throws(UsageError) in
            guard SourceOption.isVariableName(text) else {
                throw invalid(text, option, "the name of an environment variable, such as CACHE_SERVE_TOKEN", command)
            }
            return text
        })
    }

    /// An origin (`https://dash.example.org`), or `*`; a trailing `/`, as a browser's address
    /// bar shows an origin, is read as the origin.
    static var origin: ValueParser {
        ValueParser(parse: { given, option, command throws(UsageError) in
            var origin = given
            while origin.hasSuffix("/") { origin.removeLast() }
            guard origin == "*" || CommandParser.isOrigin(origin) else {
                throw invalid(given, option, "an origin such as https://dash.example.org (a scheme, a host and perhaps a port), several separated by commas, or * for reads from any page", command)
            }
            return origin
        })
    }

    /// A host name (`cache.example.org`): no scheme, no port.
    static var hostName: ValueParser {
        ValueParser(parse: { host, option, command throws(UsageError) in
            guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.".unicodeScalars.contains($0) }) else {
                throw invalid(host, option, "a host name such as cache.example.org (no scheme, no port)", command)
            }
            return host
        })
    }
}
