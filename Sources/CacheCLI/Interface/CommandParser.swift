import FoundationEssentials
import Glibc
import OfflineCache

/// Turns `cache`'s arguments into an `Invocation`, or a `UsageError`. Pure: no I/O.
enum CommandParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var rest = arguments
        let databasePaths = try extractDatabasePaths(&rest)
        let color = try extractColor(&rest)
        let readOnly = extractFlag("--read-only", &rest)
        func invocation(_ command: Command) -> Invocation {
            Invocation(databasePaths: databasePaths, color: color, readOnly: readOnly, command: command)
        }
        let wantsHelp = rest.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }

        guard let first = rest.first else { return invocation(.help("")) }
        if first == "--version" || first == "-V" { return invocation(.version) }
        if first == "-h" || first == "--help" { return invocation(.help("")) }
        if first.hasPrefix("-") {
            throw UsageError(message: "Unknown option '\(first)'. Expected a subcommand first.", command: nil)
        }
        let commands = CommandTable.topLevel
        guard commands.contains(first) else {
            var message = "Unknown command '\(first)'."
            if let best = commands.min(by: { editDistance($0, first) < editDistance($1, first) }),
               editDistance(best, first) <= 2 {
                message += " Did you mean '\(best)'?"
            }
            throw UsageError(message: message, command: nil)
        }
        rest.removeFirst()

        var name = first
        // A command that is only a group of subcommands (`sources add`, `import airbyte`).
        if first == "sources" || first == "import" {
            let subcommands = CommandTable.spec(first).subcommands.map(\.name)
            let expected = subcommands.count == 1 ? subcommands[0] : subcommands.dropLast().joined(separator: ", ") + " or " + subcommands.last!
            guard let sub = rest.first, !sub.hasPrefix("-") else {
                if wantsHelp { return invocation(.help(first)) }
                throw UsageError(message: "Missing subcommand: \(expected).", command: first)
            }
            guard subcommands.contains(sub) else {
                throw UsageError(message: "Unknown subcommand '\(first) \(sub)'. Expected \(expected).", command: first)
            }
            rest.removeFirst()
            name = "\(first) \(sub)"
        }
        if first == "outbox", let action = rest.first, CommandTable.outboxActions.contains(action) {
            rest.removeFirst()
            name = "outbox \(action)"
        }
        if wantsHelp && (first != "help" || rest.allSatisfy { $0 == "-h" || $0 == "--help" }) { return invocation(.help(name)) }
        if databasePaths.count > 1 { try checkSeveralFiles(databasePaths, name) }
        return invocation(try parseCommand(name, rest))
    }

    /// Removes every `--db PATH` / `--db=PATH` from anywhere before `--`, in order.
    private static func extractDatabasePaths(_ arguments: inout [String]) throws(UsageError) -> [String] {
        var paths: [String] = []
        while let path = try extractGlobal("--db", "<path>", &arguments, first: true) {
            if path.isEmpty { throw UsageError(message: "The value of '--db' is empty.", command: nil) }
            paths.append(path)
        }
        return paths
    }

    /// Several `--db`: only a command that reads takes them, and no more files than SQLite
    /// attaches to one connection; the same file twice is a mistake.
    private static func checkSeveralFiles(_ paths: [String], _ command: String) throws(UsageError) {
        guard CommandTable.readsSeveralFiles.contains(command) else {
            throw UsageError(message: "'cache \(command)' \(CommandTable.byName[command]?.usesDatabase == false ? "takes no database" : "writes, to one file"): give one --db (several are for the commands that only read: \(CommandTable.readsSeveralFiles.sorted().joined(separator: ", "))).", command: command)
        }
        guard paths.count <= CommandTable.mostDatabaseFiles else {
            throw UsageError(message: "\(paths.count) --db files given: at most \(CommandTable.mostDatabaseFiles) are read as one cache.", command: command)
        }
        if let twice = paths.first(where: { path in paths.filter { $0 == path }.count > 1 }) {
            throw UsageError(message: "'--db \(twice)' is given twice.", command: command)
        }
    }

    private static func extractColor(_ arguments: inout [String]) throws(UsageError) -> ColorChoice? {
        guard let text = try extractGlobal("--color", "<when>", &arguments) else { return nil }
        guard let choice = ColorChoice(rawValue: text) else {
            throw UsageError(message: "Invalid value '\(text)' for '--color': expected auto, always or never.", command: nil)
        }
        return choice
    }

    /// Takes a global flag (`--read-only`) from anywhere before `--`: whether it was there.
    private static func extractFlag(_ flag: String, _ arguments: inout [String]) -> Bool {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let found = arguments[..<end].contains(flag)
        arguments = arguments[..<end].filter { $0 != flag } + arguments[end...]
        return found
    }

    /// Takes a global option (`--db PATH`, `--color WHEN`) from anywhere before `--`.
    /// With `first`, only the first occurrence is taken (a repeatable option is taken in a loop).
    private static func extractGlobal(_ option: String, _ placeholder: String, _ arguments: inout [String], first: Bool = false) throws(UsageError) -> String? {
        var value: String?
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            let argument = arguments[index]
            if argument == option {
                guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
                    throw UsageError(message: "Missing value for '\(option) \(placeholder)'.", command: nil)
                }
                value = arguments[index + 1]
                arguments.removeSubrange(index...(index + 1))
                if first { return value }
            } else if argument.hasPrefix(option + "=") {
                value = String(argument.dropFirst(option.count + 1))
                arguments.remove(at: index)
                if first { return value }
            } else {
                index += 1
            }
        }
        return value
    }

    /// The command's own arguments, parsed by its declaration (`CommandTable.declarations`).
    private static func parseCommand(_ name: String, _ arguments: [String]) throws(UsageError) -> Command {
        if name == "sources set", arguments.contains(where: { $0 == "--kind" || $0.hasPrefix("--kind=") }) {
            throw UsageError(message: "A source's kind cannot change: remove it ('cache sources remove') and add it again.", command: name)
        }
        guard let declaration = CommandTable.byDeclaredName[name] else { throw UsageError(message: "Unknown command '\(name)'.", command: nil) }
        return try declaration.parse(arguments)
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `PORT`; `localhost` is 127.0.0.1. The host is an address,
    /// not a name: the server listens on exactly what it is given.
    static func listenAddress(_ text: String, _ command: String) throws(UsageError) -> (host: String, port: UInt16) {
        let refused = ValueParser<String>.invalid(text, "--listen", "HOST:PORT with HOST an IP address (127.0.0.1, [::1], 0.0.0.0) and PORT from 0 (a free one) to 65535", command)
        var host = "127.0.0.1", portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(after: close)...]
            guard portText.hasPrefix(":") else { throw refused }
            portText = portText.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else { throw refused }  // IPv6 needs brackets
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = UInt16(portText), isAddress(host) else { throw refused }
        return (host, port)
    }

    /// An IPv4 address in dotted form, or an IPv6 one.
    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// `scheme://host[:port]`, printable, with nothing after: what a browser sends as `Origin`.
    static func isOrigin(_ text: String) -> Bool {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !text.hasSuffix("/") else { return false }
        let scheme = parts[0], rest = parts[1]
        return !scheme.isEmpty && scheme.allSatisfy({ $0.isLetter }) && !rest.isEmpty
            && rest.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && !"/?#@\\\"".unicodeScalars.contains($0) }
    }
}
