/// One declaration per option: the parser (`ArgumentScanner`), the usage lines, the help, the
/// shell completions and the man page are all made from these, so they cannot disagree.
struct OptionSpec: Sendable {
    var name: String            // "--limit"
    var short: String? = nil    // "-q"
    /// The value's placeholder, as in `--limit <n>`; nil for a flag.
    var value: String? = nil
    var repeatable = false
    var help: String
    /// What a shell may offer for the value.
    var completion: Completion = .none
    /// The value may be left out, and is given only as `--opt=VALUE` (`--wait[=<duration>]`):
    /// `--opt` alone is a flag, and the word after it is never its value.
    var valueIsOptional = false

    /// Whether the next word is the option's value.
    var takesValue: Bool { value != nil && !valueIsOptional }

    /// `-q, --quiet`, `--limit <n>` or `--wait[=<duration>]`, as help and the man page show it.
    var label: String {
        let long = value.map { valueIsOptional ? "\(name)[=<\($0)>]" : "\(name) <\($0)>" } ?? name
        return short.map { "\($0), \(long)" } ?? long
    }
}

/// What a shell completion offers for an option's value or an argument.
enum Completion: Sendable, Equatable {
    case none
    case choices([String])
    case file
    case sources
    case commands
}

struct ArgumentSpec: Sendable {
    var label: String           // "<name>"
    var help: String
    var optional = false
    var repeated = false
    var completion: Completion = .none
}

/// A command: what it is for, what it takes, and its examples.
struct CommandSpec: Sendable {
    var name: String            // "sync", "sources add", or "" for the top level
    var overview: String
    var arguments: [ArgumentSpec] = []
    var options: [OptionSpec] = []
    /// Options that must be given.
    var required: [String] = []
    /// Groups of options of which at most one may be given.
    var exclusive: [[String]] = []
    var subcommands: [(name: String, summary: String)] = []
    var examples: [String] = []
    /// Whether `--db` and `--color` apply (everything but `help`).
    var usesDatabase = true

    func option(_ name: String) -> OptionSpec? {
        options.first { $0.name == name || $0.short == name }
    }

    /// `cache list <name> [--stale] [--limit <n>] [--json | --csv] …`, made from the declarations.
    var usage: String {
        var parts = ["cache"]
        if name.isEmpty {
            parts += ["[--db <path>]", "<subcommand>", "[options]"]
            return parts.joined(separator: " ")
        }
        parts.append(name)
        if !subcommands.isEmpty { parts.append("<subcommand>") }
        for argument in arguments {
            let shown = argument.repeated ? "\(argument.label) ..." : argument.label
            parts.append(argument.optional ? "[\(shown)]" : shown)
        }
        var grouped: Set<String> = []
        for option in options {
            guard !grouped.contains(option.name) else { continue }
            if let group = exclusive.first(where: { $0.contains(option.name) }) {
                grouped.formUnion(group)
                let shown = group.compactMap { self.option($0).map { Self.usageText($0) + ($0.repeatable ? "..." : "") } }
                parts.append("[" + shown.joined(separator: " | ") + "]")
            } else if required.contains(option.name) {
                parts.append(Self.usageText(option))
            } else {
                parts.append("[\(Self.usageText(option))]" + (option.repeatable ? "..." : ""))
            }
        }
        return parts.joined(separator: " ")
    }

    private static func usageText(_ option: OptionSpec) -> String {
        guard let value = option.value else { return option.name }
        if option.valueIsOptional { return "\(option.name)[=<\(value)>]" }
        if case .choices(let choices) = option.completion { return "\(option.name) \(choices.joined(separator: "|"))" }
        return "\(option.name) <\(value)>"
    }

    /// Every option the command accepts as help lists them: its own, then the global ones.
    var allOptions: [OptionSpec] {
        options + (usesDatabase ? CommandTable.globalOptions : []) + [CommandTable.helpOption]
    }

    /// Help laid out the way swift-argument-parser users know.
    func render() -> String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(usage)\n"
        func section(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            text += "\n\(title):\n"
            let width = min(rows.map(\.0.count).max() ?? 0, 28)
            for (left, right) in rows {
                let pad = left.count < width ? String(repeating: " ", count: width - left.count) : ""
                text += left.count > width ? "  \(left)\n  \(String(repeating: " ", count: width))  \(right)\n"
                                           : "  \(left)\(pad)  \(right)\n"
            }
        }
        section("ARGUMENTS", arguments.map { ($0.label, $0.help) })
        let shownOptions = name.isEmpty ? CommandTable.globalOptions + [CommandTable.versionOption, CommandTable.helpOption] : allOptions
        section("OPTIONS", shownOptions.map { ($0.label, $0.help) })
        section("SUBCOMMANDS", subcommands.map { ($0.name, $0.summary) })
        if !examples.isEmpty {
            text += "\nEXAMPLES:\n" + examples.map { "  \($0)\n" }.joined()
        }
        if !subcommands.isEmpty {
            text += "\n  See 'cache help <subcommand>' for detailed help.\n"
        }
        return text
    }
}
