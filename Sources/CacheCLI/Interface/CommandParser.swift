import FoundationEssentials
import Glibc
import OfflineCache

/// Turns `cache`'s arguments into an `Invocation`, or a `UsageError`. Pure: no I/O.
enum CommandParser {
    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var rest = arguments
        let databasePath = try extractDatabasePath(&rest)
        let color = try extractColor(&rest)
        func invocation(_ command: Command) -> Invocation {
            Invocation(databasePath: databasePath, color: color, command: command)
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
        return invocation(try parseCommand(name, rest))
    }

    /// Removes `--db PATH` / `--db=PATH` from anywhere before `--`.
    private static func extractDatabasePath(_ arguments: inout [String]) throws(UsageError) -> String? {
        let path = try extractGlobal("--db", "<path>", &arguments)
        if path?.isEmpty == true { throw UsageError(message: "The value of '--db' is empty.", command: nil) }
        return path
    }

    private static func extractColor(_ arguments: inout [String]) throws(UsageError) -> ColorChoice? {
        guard let text = try extractGlobal("--color", "<when>", &arguments) else { return nil }
        guard let choice = ColorChoice(rawValue: text) else {
            throw UsageError(message: "Invalid value '\(text)' for '--color': expected auto, always or never.", command: nil)
        }
        return choice
    }

    /// Takes a global option (`--db PATH`, `--color WHEN`) from anywhere before `--`.
    private static func extractGlobal(_ option: String, _ placeholder: String, _ arguments: inout [String]) throws(UsageError) -> String? {
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
            } else if argument.hasPrefix(option + "=") {
                value = String(argument.dropFirst(option.count + 1))
                arguments.remove(at: index)
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
            let settings = try SourceSettings(args, name)
            if let option = SourceSettings.layoutOptions.first(where: { args.has($0) && !kind.layoutOptions.contains($0) }) {
                throw UsageError(message: SourceRules.notForKind(option), command: name)
            }
            var layout: RecordLayout?
            if kind.keepsRecords {
                guard let key = settings.key else {
                    throw UsageError(message: SourceRules.missingKey(kind), command: name)
                }
                layout = RecordLayout(rows: settings.rows ?? JSONPath(), key: key, next: settings.next, nextParam: settings.nextParam,
                                      maxPages: settings.maxPages ?? RecordLayout.defaultMaxPages, delimiter: settings.delimiter)
                if settings.nextParam != nil, settings.next == nil || settings.next == .link {
                    throw UsageError(message: "'--next-param' needs '--next <path>': the cursor's place in the body.", command: name)
                }
            }
            return .sourcesAdd(.init(name: sourceName, kind: kind, url: settings.url!, ttlSeconds: settings.ttl ?? Source.defaultTTL,
                                     mode: settings.mode, headers: settings.headers ?? [], tokenEnv: settings.tokenEnv,
                                     maxBytes: settings.maxBytes, caCert: settings.caCert, maxDelete: settings.maxDelete,
                                     alertAfterSeconds: settings.alertAfter, layout: layout))

        case "sources set":
            let sourceName = try sourceName(args, name)
            let settings = try SourceSettings(args, name)
            var set = Command.SetSource(name: sourceName, url: settings.url, ttlSeconds: settings.ttl, mode: settings.mode,
                                        headers: args.has("--no-headers") ? [] : settings.headers,
                                        maxBytes: settings.maxBytes, maxDelete: settings.maxDelete,
                                        alertAfterSeconds: settings.alertAfter)
            if args.has("--no-token") { set.tokenEnv = .some(nil) } else if let token = settings.tokenEnv { set.tokenEnv = token }
            if args.has("--no-ca-cert") { set.caCert = .some(nil) } else if let file = settings.caCert { set.caCert = file }
            set.rows = settings.rows
            set.key = settings.key
            set.next = settings.next
            set.nextParam = settings.nextParam
            set.maxPages = settings.maxPages
            set.delimiter = settings.delimiter
            if set.changesNothing {
                throw UsageError(message: "Nothing to change: give at least one option, such as --ttl or --url.", command: name)
            }
            return .sourcesSet(set)

        case "sources list":
            try none(args.positionals, name)
            return .sourcesList(json: args.has("--json"))

        case "sources remove":
            return .sourcesRemove(try exactlyOne(args.positionals, "<name>", name), yes: args.has("--yes"))

        case "sync":
            var sync = Command.Sync(names: args.positionals, ifStale: args.has("--if-stale"),
                                    json: args.has("--json"), quiet: args.has("--quiet"))
            if let text = args.value("--timeout") {
                guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--timeout", name) }
                sync.timeout = Double(seconds)
            }
            if let text = args.value("--parallel") {
                guard let count = Int(text), (1...64).contains(count) else {
                    throw invalid(text, "--parallel", "a number of sources from 1 to 64", name)
                }
                sync.parallel = count
            }
            sync.plan = args.has("--plan")
            sync.acceptRemovals = args.has("--accept-removals")
            // Accepting removals disarms the guard: for the sources named, never for all at once.
            if sync.acceptRemovals && args.positionals.isEmpty {
                throw UsageError(message: "'--accept-removals' needs the names of the sources whose removals to apply, such as 'cache sync bank --accept-removals'.", command: name)
            }
            return .sync(sync)

        case "list":
            // `cache list` alone lists the sources there are to list.
            if args.positionals.isEmpty { return .sourcesList(json: args.has("--json")) }
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
            return .list(list)

        case "status":
            var status = Command.Status(names: args.positionals, json: args.has("--json"))
            if let text = args.value("--max-age") {
                guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--max-age", name) }
                status.maxAge = seconds
            }
            return .status(status)

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
            } else if let text = args.value("--since") {
                guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--since", name) }
                selection = .since(seconds: seconds)
            }
            return .diff(source: source, selection: selection, json: args.has("--json"))

        case "prune":
            try none(args.positionals, name)
            let text = args.value("--keep")!
            guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--keep", name) }
            return .prune(keepSeconds: seconds)

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

    /// The settings `sources add` and `sources set` share, each checked; nil where not given.
    struct SourceSettings {
        var url: URL?
        var ttl: Int?
        var mode: SyncMode?
        var headers: [Source.Header]?
        var tokenEnv: String?
        var maxBytes: Int?
        var caCert: String?
        var maxDelete: RemovalLimit?
        var alertAfter: Int?
        var rows: JSONPath?
        var key: [JSONPath]?
        var next: RecordLayout.NextPage?
        var nextParam: String?
        var maxPages: Int?
        var delimiter: UInt8?

        /// The options that describe a kind's layout; each kind takes some (`SourceKind.layoutOptions`).
        static var layoutOptions: [String] {
            var seen: Set<String> = []
            return SourceKind.allCases.flatMap(\.layoutOptions).filter { seen.insert($0).inserted }
        }

        init(_ args: ArgumentScanner.Result, _ name: String) throws(UsageError) {
            if let text = args.value("--delimiter") {
                guard let byte = RecordLayout.delimiter(text) else {
                    throw invalid(text, "--delimiter", "one character such as , ; | or tab (not a quote)", name)
                }
                delimiter = byte
            }
            if let text = args.value("--rows") {
                guard text.hasPrefix("$"), let path = JSONPath(text) else { throw invalid(text, "--rows", "a path such as $, $.results or $.data.items", name) }
                rows = path
            }
            if let text = args.value("--key") {
                let fields = text.split(separator: ",", omittingEmptySubsequences: false).map { JSONPath(String($0).trimmingSpaces()) }
                guard !fields.isEmpty, fields.allSatisfy({ $0 != nil && !$0!.keys.isEmpty }) else {
                    throw invalid(text, "--key", "field names such as id, or user.id,repo", name)
                }
                key = fields.compactMap { $0 }
            }
            if let text = args.value("--next") {
                guard text == "link" || text.hasPrefix("$"), let next = RecordLayout.NextPage(text) else { throw invalid(text, "--next", "link, or a path such as $.next", name) }
                self.next = next
            }
            if let text = args.value("--next-param") {
                guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.[]".contains($0)) }) else {
                    throw invalid(text, "--next-param", "a query parameter name", name)
                }
                nextParam = text
            }
            if let text = args.value("--max-pages") {
                guard let count = Int(text), (1...100_000).contains(count) else { throw invalid(text, "--max-pages", "a number of pages from 1", name) }
                maxPages = count
            }
            if let urlText = args.value("--url") {
                switch SourceRules.url(urlText) {
                case .success(let url): self.url = url
                case .failure(let problem): throw UsageError(message: problem.message, command: name)
                }
            }
            if let text = args.value("--ttl") {
                guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--ttl", name) }
                ttl = seconds
            }
            if let text = args.value("--mode") {
                guard let parsed = SyncMode(rawValue: text) else { throw invalid(text, "--mode", "replace or merge", name) }
                mode = parsed
            }
            if args.has("--header") {
                var headers: [Source.Header] = []
                for line in args.values("--header") {
                    guard let header = Source.Header(line: line) else { throw invalid(line, "--header", "\"Name: value\"", name) }
                    headers.append(header)
                }
                self.headers = headers
            }
            tokenEnv = args.value("--token-env")
            if let tokenEnv, tokenEnv.isEmpty || !tokenEnv.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
                throw invalid(tokenEnv, "--token-env", "an environment variable name", name)
            }
            if let text = args.value("--max-bytes") {
                guard let value = Int(text), (1...FetchRequest.largestMaxBytes).contains(value) else {
                    throw invalid(text, "--max-bytes", "a number of bytes from 1 to \(FetchRequest.largestMaxBytes) (16 GiB)", name)
                }
                maxBytes = value
            }
            if let path = args.value("--ca-cert") {
                // Stored absolute: cron and the background refresh run from other folders.
                let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
                guard FileManager.default.isReadableFile(atPath: absolute) else {
                    throw invalid(path, "--ca-cert", "a readable PEM file of CA certificates", name)
                }
                caCert = absolute
            }
            if let text = args.value("--max-delete") {
                guard let limit = RemovalLimit(text) else { throw invalid(text, "--max-delete", "a number of rows such as 20, or a percentage such as 50%", name) }
                maxDelete = limit
            }
            if let text = args.value("--alert-after") {
                guard let seconds = DurationText.seconds(text) else { throw invalidDuration(text, "--alert-after", name) }
                alertAfter = seconds
            }
        }
    }

    private static func limit(_ args: ArgumentScanner.Result, _ command: String) throws(UsageError) -> Int? {
        guard let text = args.value("--limit") else { return nil }
        // 0 would print nothing and then say there is nothing ("No sync runs yet"): refused.
        guard let limit = Int(text), limit >= 1 else { throw invalid(text, "--limit", "a whole number, 1 or more", command) }
        return limit
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


}
