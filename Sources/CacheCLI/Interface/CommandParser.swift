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
        if first == "sources" {
            let subcommands = CommandTable.sourcesSubcommands
            let expected = subcommands.dropLast().joined(separator: ", ") + " or " + subcommands.last!
            guard let sub = rest.first, !sub.hasPrefix("-") else {
                if wantsHelp { return invocation(.help("sources")) }
                throw UsageError(message: "Missing subcommand: \(expected).", command: "sources")
            }
            guard subcommands.contains(sub) else {
                throw UsageError(message: "Unknown subcommand 'sources \(sub)'. Expected \(expected).", command: "sources")
            }
            rest.removeFirst()
            name = "sources \(sub)"
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

    private static func parseCommand(_ name: String, _ arguments: [String]) throws(UsageError) -> Command {
        if name == "sources set", arguments.contains(where: { $0 == "--kind" || $0.hasPrefix("--kind=") }) {
            throw UsageError(message: "A source's kind cannot change: remove it ('cache sources remove') and add it again.", command: name)
        }
        let args = try ArgumentScanner(CommandTable.spec(name)).scan(arguments)
        switch name {
        case "help":
            let topic = args.positionals.joined(separator: " ")
            guard CommandTable.byName[topic] != nil else {
                throw UsageError(message: "No help for '\(topic)': it is not a command.", command: "help")
            }
            return .help(topic)

        case "version":
            try none(args.positionals, name)
            return .version

        case "completion":
            let shell = try exactlyOne(args.positionals, "<shell>", name)
            guard Completions.shells.contains(shell) else { throw invalid(shell, "<shell>", "bash, zsh or fish", name) }
            return .completion(shell: shell)

        case "manpage":
            try none(args.positionals, name)
            return .manpage

        case "sources add":
            let sourceName = try sourceName(args, name)
            let kindText = args.value("--kind")!
            guard let kind = SourceKind(rawValue: kindText) else {
                let kinds = SourceKind.allCases.map(\.rawValue)
                throw invalid(kindText, "--kind", kinds.dropLast().joined(separator: ", ") + " or " + kinds.last!, name)
            }
            do throws(SourceRules.Problem) {
                return .sourcesAdd(try sourceSettings(args, changing: false).newSource(name: sourceName, kind: kind))
            } catch {
                throw UsageError(message: error.message, command: name)
            }

        case "sources set":
            let sourceName = try sourceName(args, name)
            let settings = sourceSettings(args, changing: true)
            do throws(SourceRules.Problem) {
                try settings.checkedAlone()
            } catch {
                throw UsageError(message: error.message, command: name)
            }
            return .sourcesSet(name: sourceName, settings)

        case "sources list":
            try none(args.positionals, name)
            return .sourcesList(json: args.has("--json"))

        case "sources export":
            return .sourcesExport(names: args.positionals)

        case "apply":
            let file = try exactlyOne(args.positionals, "<file>", name)
            return .apply(Command.Apply(file: file, plan: args.has("--plan"), prune: args.has("--prune"), yes: args.has("--yes"), json: args.has("--json")))

        case "sources remove":
            return .sourcesRemove(try exactlyOne(args.positionals, "<name>", name), yes: args.has("--yes"))

        case "sync":
            var sync = Command.Sync(names: args.positionals, ifStale: args.has("--if-stale"),
                                    json: args.has("--json"), quiet: args.has("--quiet"))
            if let seconds = try duration(args, "--timeout", name) { sync.timeout = Double(seconds) }
            if let text = args.value("--parallel") {
                guard let count = Int(text), (1...64).contains(count) else {
                    throw invalid(text, "--parallel", "a number of sources from 1 to 64", name)
                }
                sync.parallel = count
            }
            sync.plan = args.has("--plan")
            sync.acceptRemovals = args.has("--accept-removals")
            sync.full = args.has("--full")
            // Accepting removals disarms the guard: for the sources named, never for all at once.
            if sync.acceptRemovals && args.positionals.isEmpty {
                throw UsageError(message: "'--accept-removals' needs the names of the sources whose removals to apply, such as 'cache sync bank --accept-removals'.", command: name)
            }
            return .sync(sync)

        case "list":
            // `cache list` alone lists the sources there are to list.
            if args.positionals.isEmpty {
                if let option = ["--as-of", "--stale", "--limit", "--columns", "--csv"].first(where: { args.has($0) }) {
                    throw UsageError(message: "'\(option)' needs a source: 'cache list NAME \(option) …'.", command: name)
                }
                return .sourcesList(json: args.has("--json"))
            }
            var list = Command.List(name: try exactlyOne(args.positionals, "<name>", name))
            list.staleOnly = args.has("--stale")
            list.offline = args.has("--offline")
            list.format = args.has("--json") ? .json : args.has("--csv") ? .csv : .human
            list.wait = args.has("--wait") ? true : args.has("--no-wait") ? false : nil
            list.limit = try limit(args, name)
            if let text = args.value("--columns") {
                let columns = text.split(separator: ",").map { $0.trimmingSpaces() }
                guard !columns.isEmpty, !columns.contains("") else { throw invalid(text, "--columns", "field names separated by commas", name) }
                list.columns = columns
            }
            if let text = args.value("--as-of") { list.asOf = try moment(text, "--as-of", name) }
            return .list(list)

        case "status":
            var status = Command.Status(names: args.positionals, json: args.has("--json"))
            status.maxAge = try duration(args, "--max-age", name)
            status.maxLag = try duration(args, "--max-lag", name)
            return .status(status)

        case "serve":
            try none(args.positionals, name)
            var serve = Command.Serve()
            if let text = args.value("--listen") { (serve.host, serve.port) = try listenAddress(text, name) }
            if let variable = args.value("--token-env") {
                guard SourceOption.isVariableName(variable) else {
                    throw invalid(variable, "--token-env", "the name of an environment variable, such as CACHE_SERVE_TOKEN", name)
                }
                serve.tokenEnv = variable
            }
            // Repeated, or a list: `--cors http://localhost:5173,http://127.0.0.1:5173`. A
            // trailing `/` (as a browser's address bar shows an origin) is read as the origin.
            for given in args.values("--cors").flatMap({ $0.split(separator: ",").map { $0.trimmingSpaces() } }) {
                var origin = given
                while origin.hasSuffix("/") { origin.removeLast() }
                guard origin == "*" || Self.isOrigin(origin) else {
                    throw invalid(given, "--cors", "an origin such as https://dash.example.org (a scheme, a host and perhaps a port), several separated by commas, or * for reads from any page", name)
                }
                serve.cors.append(origin)
            }
            for host in args.values("--host-name").flatMap({ $0.split(separator: ",").map { $0.trimmingSpaces() } }) {
                guard !host.isEmpty, host.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.".unicodeScalars.contains($0) }) else {
                    throw invalid(host, "--host-name", "a host name such as cache.example.org (no scheme, no port)", name)
                }
                serve.hostNames.append(host)
            }
            // 0 is allowed here: every refresh asked for fetches.
            if let text = args.value("--refresh-interval") {
                guard let interval = ["0", "0s"].contains(text) ? 0 : DurationText.seconds(text) else { throw invalidDuration(text, "--refresh-interval", name) }
                serve.refreshInterval = interval
            }
            if let text = args.value("--max-connections-per-client") {
                guard let count = UInt32(text), count >= 1, count <= 1024 else {
                    throw invalid(text, "--max-connections-per-client", "a number of connections from 1 to 1024", name)
                }
                serve.maxConnectionsPerClient = count
            }
            if let format = args.value("--access-log-format") {
                guard ["text", "json"].contains(format) else { throw invalid(format, "--access-log-format", "text or json", name) }
                serve.accessLogFormat = format
                serve.accessLog = true
            }
            serve.maxAge = try duration(args, "--max-age", name)
            serve.maxLag = try duration(args, "--max-lag", name)
            serve.accessLog = args.has("--access-log")
            // Rows and their history are for this machine unless a token guards them.
            if serve.tokenEnv == nil, !SourceRules.isLoopback(serve.host) {
                throw UsageError(message: "'--listen \(serve.host)' is reachable from other machines: give '--token-env VAR' too, so every request needs that token, or listen on 127.0.0.1.", command: name)
            }
            return .serve(serve)

        case "metrics":
            try none(args.positionals, name)
            return .metrics(textfile: args.value("--textfile"))

        case "history":
            if args.positionals.count > 1 { throw UsageError(message: "Unexpected argument '\(args.positionals[1])'.", command: name) }
            return .history(source: args.positionals.first, limit: try limit(args, name), json: args.has("--json"))

        case "diff":
            let source = try exactlyOne(args.positionals, "<name>", name)
            var selection = HistoryStore.Selection.latest
            if let text = args.value("--run") {
                guard let id = Int(text), id > 0 else { throw invalid(text, "--run", "a run number from 'cache history'", name) }
                selection = .run(id)
            } else if let seconds = try duration(args, "--since", name) {
                selection = .since(seconds: seconds)
            }
            return .diff(source: source, selection: selection, json: args.has("--json"))

        case "prune":
            try none(args.positionals, name)
            let text = args.value("--keep")!
            guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--keep", name) }
            return .prune(keepSeconds: seconds)

        case "log":
            guard args.positionals.count == 2 else {
                throw UsageError(message: args.positionals.count < 2 ? "Missing expected argument '\(args.positionals.isEmpty ? "<name>" : "<key>")'."
                                                                     : "Unexpected argument '\(args.positionals[2])'.", command: name)
            }
            return .log(source: args.positionals[0], key: args.positionals[1], json: args.has("--json"))

        case "search":
            guard args.positionals.count == 2 else {
                throw UsageError(message: args.positionals.count < 2 ? "Missing expected argument '\(args.positionals.isEmpty ? "<name>" : "<query>")'."
                                                                     : "Unexpected argument '\(args.positionals[2])'; quote a query of several words.", command: name)
            }
            var search = Command.Search(name: args.positionals[0], query: args.positionals[1], json: args.has("--json"))
            if let limit = try limit(args, name) { search.limit = limit }
            return .search(search)

        case "reindex":
            return .reindex(names: args.positionals)

        case "sql":
            let query = try exactlyOne(args.positionals, "<query>", name)
            return .sql(query: query, format: args.has("--json") ? .json : args.has("--csv") ? .csv : .human)

        case "check":
            try none(args.positionals, name)
            return .check

        case "export":
            let source = try exactlyOne(args.positionals, "<name>", name)
            let format: Command.ExportFormat = args.has("--csv") ? .csv : args.has("--ndjson") ? .ndjson : .json
            return .export(source: source, format: format)

        default:
            throw UsageError(message: "Unknown command '\(name)'.", command: nil)
        }
    }

    private static func sourceName(_ args: ArgumentScanner.Result, _ command: String) throws(UsageError) -> String {
        let name = try exactlyOne(args.positionals, "<name>", command)
        if let problem = SourceRules.nameProblem(name) { throw UsageError(message: problem, command: command) }
        return name
    }

    /// The settings `sources add` and `sources set` share, as given; the library checks them
    /// (`SourceSettings`), for the command line and apps alike.
    /// `changing`: the command takes the switches that clear a setting (`set`).
    private static func sourceSettings(_ args: ArgumentScanner.Result, changing: Bool) -> SourceSettings {
        var settings = SourceSettings()
        for option in SourceOption.all where (changing || option.clears.isEmpty) && args.has(option.flag) {
            settings.given[option.name] = option.isSwitch ? [] : option.repeatable ? args.values(option.flag) : [args.value(option.flag)!]
        }
        return settings
    }

    private static func limit(_ args: ArgumentScanner.Result, _ command: String) throws(UsageError) -> Int? {
        guard let text = args.value("--limit") else { return nil }
        // 0 would print nothing and then say there is nothing ("No sync runs yet"): refused.
        guard let limit = Int(text), limit >= 1 else { throw invalid(text, "--limit", "a whole number, 1 or more", command) }
        return limit
    }

    /// A moment (`Moment.parse`), or the usage error that says what one is.
    static func moment(_ text: String, _ option: String, _ command: String) throws(UsageError) -> String {
        switch Result(catching: { () throws(Moment.Unreadable) in try Moment.parse(text) }) {
        case .success(let moment):
            return moment
        case .failure(.expected(let expected)):
            throw invalid(text, option, expected, command)
        case .failure(.future):
            throw UsageError(message: "'\(text)' for '\(option)' is in the future: the cache knows what was, not what will be.", command: command)
        }
    }

    private static func exactlyOne(_ positionals: [String], _ label: String, _ command: String) throws(UsageError) -> String {
        guard let first = positionals.first else {
            throw UsageError(message: "Missing expected argument '\(label)'.", command: command)
        }
        guard positionals.count == 1 else {
            throw UsageError(message: "Unexpected argument '\(positionals[1])'.", command: command)
        }
        return first
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `PORT`; `localhost` is 127.0.0.1. The host is an address,
    /// not a name: the server listens on exactly what it is given.
    static func listenAddress(_ text: String, _ command: String) throws(UsageError) -> (host: String, port: UInt16) {
        let refused = invalid(text, "--listen", "HOST:PORT with HOST an IP address (127.0.0.1, [::1], 0.0.0.0) and PORT from 0 (a free one) to 65535", command)
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

    private static func none(_ positionals: [String], _ command: String) throws(UsageError) {
        if let first = positionals.first {
            throw UsageError(message: "Unexpected argument '\(first)'.", command: command)
        }
    }

    private static func invalid(_ value: String, _ option: String, _ expected: String, _ command: String) -> UsageError {
        UsageError(message: "Invalid value '\(value)' for '\(option)': expected \(expected).", command: command)
    }

    private static func invalidDuration(_ value: String, _ option: String, _ command: String) -> UsageError {
        invalid(value, option, "a duration such as \(CommandTable.durationHelp)", command)
    }

    /// `option`'s duration in seconds; nil when it is not given; a usage error when it is not one.
    private static func duration(_ args: ArgumentScanner.Result, _ option: String, _ command: String) throws(UsageError) -> Int? {
        guard let text = args.value(option) else { return nil }
        guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, option, command) }
        return seconds
    }


}
