import OfflineCache

/// Every command and option of `cache`, declared once. `cache help X`, `cache X --help`,
/// usage errors, the parser, the completions and the man page all read this table.
enum CommandTable {
    static let globalOptions = [
        OptionSpec(name: "--db", value: "path", repeatable: true,
                   help: "The database (default: $CACHE_DB, else $XDG_CACHE_HOME/cache/cache.sqlite3, else ~/.cache/cache/cache.sqlite3). Commands that only read take it up to \(mostDatabaseFiles) times: the files, each holding its own sources (one per primary), are read as one cache, read-only.",
                   completion: .file),
        OptionSpec(name: "--color", value: "when", help: "auto (a terminal, unless NO_COLOR is set), always or never.",
                   completion: .choices(["auto", "always", "never"])),
        OptionSpec(name: "--read-only", help: "Read the cache as it is and write nothing: no refresh, no lease, no file made (also CACHE_READ_ONLY=1); for a replica."),
    ]
    /// The commands that read several `--db` files as one cache (each source from the file that
    /// holds it); every other command takes one.
    /// The most `--db` files read as one (SQLite attaches at most 10 databases to one
    /// connection here, and `cache sql` reads them through one).
    static let mostDatabaseFiles = 10

    static let readsSeveralFiles: Set<String> = ["list", "search", "status", "sources list", "export", "log", "history", "diff", "sql", "metrics", "serve"]

    static let versionOption = OptionSpec(name: "--version", short: "-V", help: "Show the version of cache, SQLite and libcurl.")
    static let helpOption = OptionSpec(name: "--help", short: "-h", help: "Show help information.")

    static let durationHelp = SourceOption.durationExamples

    /// `--kind`'s help, from the kinds' own summaries.
    static var kindsHelp: String {
        let kinds = SourceKind.allCases.map { "\($0.rawValue) \($0.summary)" }
        return kinds.dropLast().joined(separator: ", ") + " or " + kinds.last! + "."
    }

    /// The options of `sources set` that cannot be given with the switch that clears them.
    static var clearingPairs: [[String]] {
        SourceOption.all.flatMap { option in
            option.clears.count == 1 ? [[SourceOption.named(option.clears[0])!.flag, option.flag]] : []
        }
    }

    /// Every command, declared once with its options and where each lands (see
    /// `CommandDeclaration`); `commands` is what help, usage, the completions and the man page read.
    static let declarations: [CommandDeclaration] = [
        CommandDeclaration(CommandSpec(
            name: "",
            overview: "Keep a local SQLite copy of JSON APIs: instant reads that work offline, refreshed behind your back.",
            subcommands: [
                ("sources", "Add, change, list, export and remove the upstreams to cache."),
                ("apply", "Make the cache's sources match a sources file (from 'sources export')."),
                ("sync", "Fetch sources and reconcile them into the cache."),
                ("list", "Print one source's cached rows at once, with stale flags; refresh behind them."),
                ("status", "Show each source's rows, staleness and last sync; --max-age checks freshness."),
                ("metrics", "Print Prometheus metrics for every source."),
                ("serve", "Serve the cache over HTTP: rows with freshness headers, live events, refreshes."),
                ("history", "List the sync runs, newest first."),
                ("diff", "Show what a sync inserted, updated and removed."),
                ("log", "Show one row's versions, newest first."),
                ("search", "Search a source's text, ranked, with a snippet per hit."),
                ("import", "Make a sources file from an API description written for another tool (Airbyte's)."),
                ("edit", "Change, remove or create a record locally, at once; push it when the upstream answers."),
                ("push", "Send the queued local edits to their upstreams."),
                ("outbox", "List the local edits not yet applied; retry, drop or resolve one."),
                ("export", "Stream every row of a source with its stale flag."),
                ("sql", "Run one read-only SQL query on the cache."),
                ("check", "Check the database's integrity and schema."),
                ("backup", "Write a consistent, checked copy of the cache while syncs and serve go on."),
                ("prune", "Trim old sync runs and change log entries."),
                ("reindex", "Build the search index from the cached rows (ahead of a first search, or again)."),
                ("version", "Show the version of cache, SQLite and libcurl."),
                ("completion", "Print a completion script for bash, zsh or fish."),
                ("manpage", "Print the man page, cache.1."),
                ("help", "Show help for a subcommand."),
            ],
            examples: [
                "cache sources add jokes --kind jokes --url https://official-joke-api.appspot.com/jokes/ten",
                "cache sync",
                "cache list jokes --json",
            ])) { _, _ throws(UsageError) in .help("") },
        CommandDeclaration(CommandSpec(
            name: "sources",
            overview: "Add, change, list and remove sources: named upstream URLs of one kind.",
            subcommands: [
                ("add", "Add a source."),
                ("set", "Change a source, keeping its rows and history."),
                ("list", "List the sources."),
                ("export", "Print the sources as one JSON document, for version control and 'cache apply'."),
                ("remove", "Remove a source and everything cached from it."),
            ])) { _, _ throws(UsageError) in .help("sources") },
        CommandDeclaration(CommandSpec(
            name: "sources add",
            overview: "Add a source.",
            arguments: [ArgumentSpec(label: "<name>", help: "A name for the source: letters, digits, '-', '_' and '.'.")],
            required: ["--kind", "--url"],
            examples: ["cache sources add bank --kind account --url http://127.0.0.1:8080/account --ttl 1h",
                       "cache sources add repos --kind json --url https://api.github.com/users/octocat/repos --key id --next link",
                       "cache sources add people --kind json --url https://swapi.dev/api/people/ --rows '$.results' --key url --next '$.next'",
                       "cache sources add stations --kind csv --url https://example.org/stations.csv --key id --delimiter ';'"]),
            start: SourceAdding(),
            options: [.value("--kind", "kind", help: kindsHelp, completion: .choices(SourceKind.allCases.map(\.rawValue)), \.kind, .kind)]
                + sourceOptions(adding: true, \SourceAdding.settings)) { adding, positionals, command throws(UsageError) in
            let name = try sourceName(positionals, command)
            do throws(SourceRules.Problem) {
                return .sourcesAdd(try adding.settings.newSource(name: name, kind: adding.kind!))
            } catch {
                throw UsageError(message: error.message, command: command)
            }
        },
        CommandDeclaration(CommandSpec(
            name: "sources set",
            overview: "Change a source in place: its rows, sync history and run numbers stay. Only the options given change.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source to change.", completion: .sources)],
            exclusive: clearingPairs,
            examples: ["cache sources set bank --ttl 30m", "cache sources set bank --url https://bank.example/v2/account"]),
            start: SourceSettings(), options: sourceOptions(adding: false, \SourceSettings.self)) { settings, positionals, command throws(UsageError) in
            let name = try sourceName(positionals, command)
            do throws(SourceRules.Problem) {
                try settings.checkedAlone()
            } catch {
                throw UsageError(message: error.message, command: command)
            }
            return .sourcesSet(name: name, settings)
        },
        CommandDeclaration(CommandSpec(name: "sources list", overview: "List the sources."),
                           start: Printing(), options: [.flag("--json", help: "Print a JSON array.", \.json)]) { printing, positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .sourcesList(json: printing.json)
        },
        CommandDeclaration(CommandSpec(
            name: "sources export",
            overview: "Print the sources as one JSON document, sorted and stable: {\"sources\": [{\"name\": …, \"kind\": …, \"url\": …, \"ttl\": \"1h\", …}]}. Each key is an option of 'sources add' without its dashes, each value as the option takes it; options at their defaults are left out. Only the names of environment variables are written, never their values.",
            arguments: [ArgumentSpec(label: "<name>", help: "The sources to export (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            examples: ["cache sources export > sources.json", "cache --db new.sqlite3 apply sources.json"])) { positionals, _ throws(UsageError) in
            .sourcesExport(names: positionals)
        },
        CommandDeclaration(CommandSpec(
            name: "apply",
            overview: "Make the cache's sources match a sources file, as 'sources export' writes it: a source only in the file is added; one whose options differ is changed as 'sources set' changes it (rows, history and run numbers kept); one only in the cache is kept unless --prune. The whole file is checked first, and every change is made in one transaction.",
            arguments: [ArgumentSpec(label: "<file>", help: "The sources file ('-' for standard input).", completion: .file)],
            examples: ["cache apply sources.json --plan", "cache apply sources.json", "cache apply sources.json --prune"]),
            start: Command.Apply(file: ""),
            options: [
                .flag("--plan", help: "Print what would change, and change nothing.", \.plan),
                .flag("--prune", help: "Remove the sources the file does not have, with their rows and history (asks first; see --yes).", \.prune),
                .flag("--yes", short: "-y", help: "Remove what --prune removes without asking (needed when stdin is not a terminal).", \.yes),
                .flag("--json", help: "Print one JSON object per source: {\"source\", \"action\", \"changes\"}.", \.json),
            ]) { apply, positionals, command throws(UsageError) in
            apply.file = try Positionals.exactlyOne(positionals, "<file>", command)
            return .apply(apply)
        },
        CommandDeclaration(CommandSpec(
            name: "sources remove",
            overview: "Remove a source with its cached rows and sync history.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source to remove.", completion: .sources)]),
            start: Printing(), options: [.flag("--yes", short: "-y", help: "Remove without asking (needed when stdin is not a terminal).", \.yes)]) { printing, positionals, command throws(UsageError) in
            .sourcesRemove(try Positionals.exactlyOne(positionals, "<name>", command), yes: printing.yes)
        },
        CommandDeclaration(CommandSpec(
            name: "sync",
            overview: "Fetch sources and reconcile them into the cache, each in one transaction. Bad data never replaces good data.",
            arguments: [ArgumentSpec(label: "<name>", help: "Sources to sync (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            exclusive: [["--plan", "--accept-removals"]],
            examples: ["cache sync", "cache sync bank --json", "cache sync --if-stale --quiet   # from cron", "cache sync bank --plan"]),
            start: Command.Sync(),
            options: [
                .flag("--if-stale", help: "Skip sources whose last sync is still within their TTL, and sources backing off after failures (the cron form).", \.ifStale),
                .flag("--json", help: "Print one JSON object per source.", \.json),
                .flag("--quiet", short: "-q", help: "Print nothing on success; errors still go to stderr.", \.quiet),
                .value("--timeout", "duration", help: "Give up on a source after this long, retries included (default: 30s).", \.timeout, .seconds),
                .value("--parallel", "n", help: "Fetch up to n sources at once; writes still go one at a time.", \.parallel, .number(1...64, "a number of sources from 1 to 64")),
                .flag("--plan", help: "Fetch and reconcile, then print what would change and whether the removal guard would hold it; write nothing.", \.plan),
                .flag("--accept-removals", help: "Apply a sync the removal guard would hold, this once.", \.acceptRemovals),
                .flag("--full", help: "Sync incremental sources in full, removing what upstream no longer has (through the removal guard).", \.full),
                .flag("--no-push", help: "Leave the sources' local edits queued (a sync pushes them before it fetches; with --if-stale, those whose backoff has passed).", \.noPush),
            ]) { sync, positionals, command throws(UsageError) in
            sync.names = positionals
            // Accepting removals disarms the guard: for the sources named, never for all at once.
            if sync.acceptRemovals && positionals.isEmpty {
                throw UsageError(message: "'--accept-removals' needs the names of the sources whose removals to apply, such as 'cache sync bank --accept-removals'.", command: command)
            }
            return .sync(sync)
        },
        CommandDeclaration(CommandSpec(
            name: "list",
            overview: "Print one source's cached rows at once, each with its stale flag. When the source is stale, start one background refresh; on a terminal, redraw the list when it lands. Without a name, list the sources.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", optional: true, completion: .sources)],
            exclusive: [["--json", "--csv"], ["--wait", "--no-wait"], ["--as-of", "--wait"]],
            examples: ["cache list bank", "cache list jokes --stale --json", "cache list bank --as-of 2026-11-30T09:00:00Z"]),
            start: Command.List(name: ""),
            options: [
                .flag("--stale", help: "Only rows upstream has not confirmed within the TTL.", \.staleOnly),
                .value("--limit", "n", help: "At most n rows.", \.limit, .count),
                .flag("--json", help: "Print a JSON array.") { $0.format = .json },
                .flag("--csv", help: "Print CSV with a header row.") { $0.format = .csv },
                .flag("--offline", help: "Read the cache only; start no refresh.", \.offline),
                .flag("--wait", help: "Wait for the refresh to land, also without a terminal (then print once, after it).") { $0.wait = true },
                .flag("--no-wait", help: "Never wait, even on a terminal.") { $0.wait = false },
                .value("--columns", "fields", help: "json and csv sources: the fields to show, comma separated (default: as many as fit).", \.columns, .fieldNames),
                .value("--as-of", "time", help: "The rows as they were then, from the change log: a time such as 2026-11-30T09:00:00Z, or how long ago, such as 2h or 3d. Starts no refresh; stale flags are as of then.", \.asOf, .moment),
            ]) { list, positionals, command throws(UsageError) in
            // `cache list` alone lists the sources there are to list.
            guard let name = try Positionals.atMostOne(positionals, command) else {
                let given: [(String, Bool)] = [("--as-of", list.asOf != nil), ("--stale", list.staleOnly), ("--limit", list.limit != nil),
                                               ("--columns", list.columns != nil), ("--csv", list.format == .csv)]
                if let option = given.first(where: \.1)?.0 {
                    throw UsageError(message: "'\(option)' needs a source: 'cache list NAME \(option) …'.", command: command)
                }
                return .sourcesList(json: list.format == .json)
            }
            list.name = name
            return .list(list)
        },
        CommandDeclaration(CommandSpec(
            name: "status",
            overview: "Show each source's rows, stale rows, last success, last attempt and last error. With --max-age, check that each source succeeded recently: for monitors and health checks.",
            arguments: [ArgumentSpec(label: "<name>", help: "Only these sources (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            examples: ["cache status", "cache status --max-age 2h   # from a monitor"]),
            start: Command.Status(),
            options: [
                .flag("--json", help: "Print a JSON array.", \.json),
                .value("--max-age", "duration", help: "Exit 1, naming each source and since when, if any has not synced successfully within this (or its own --alert-after); else print one line and exit 0.", \.maxAge, .duration()),
                .value("--max-lag", "duration", help: "On a read-only follower: exit 1, saying by how much, if its primary's newest heartbeat (stamped by every 'cache sync' there) is older than this; a primary always passes.", \.maxLag, .duration()),
                .value("--max-pending", "duration", help: "Exit 1, naming each source, if a local edit not yet applied (queued, in conflict or rejected) was made longer ago than this.", \.maxPending, .duration()),
            ]) { status, positionals, _ throws(UsageError) in
            status.names = positionals
            return .status(status)
        },
        CommandDeclaration(CommandSpec(
            name: "serve",
            overview: "Serve the cache over HTTP until SIGTERM or SIGINT: GET / (in a browser, the live page: every source's rows, redrawn as syncs land), GET /sources, /sources/NAME/rows (JSON; .csv and .ndjson stream them all), /sources/NAME/rows/KEY, /events (Server-Sent Events), /healthz, /metrics and /openapi.json; POST /sources/NAME/refresh. Rows come at once with ETag, Cache-Control, Age and Cache-Status; a stale read starts one refresh behind it. Prints 'serving http://HOST:PORT' once it listens.",
            examples: ["cache serve   # then open http://127.0.0.1:8765/ in a browser", "curl -s 'http://127.0.0.1:8765/sources/jokes/rows?limit=5'",
                       "CACHE_SERVE_TOKEN=secret cache serve --listen 0.0.0.0:8765 --token-env CACHE_SERVE_TOKEN"]),
            start: Command.Serve(),
            options: [
                Option(spec: OptionSpec(name: "--listen", value: "host:port", help: "Where to listen: an address other machines reach needs --token-env; port 0 picks a free one."),
                       land: { serve, values, command throws(UsageError) in (serve.host, serve.port) = try CommandParser.listenAddress(values.last!, command) },
                       shownDefault: { "\($0.host):\($0.port)" }),
                .value("--token-env", "var", help: "Every request needs 'Authorization: Bearer' and this variable's value.", \.tokenEnv, .variableName),
                .values("--cors", "origin", help: "Let pages from this origin read the responses and refresh (CORS), such as https://dash.example.org; repeat it or give a list; * lets any page read, never change.", lists: true, \.cors, .origin),
                .values("--host-name", "name", help: "Also answer requests for this host name (a proxy's or a DNS name); any other Host is 421, against DNS rebinding.", lists: true, \.hostNames, .hostName),
                .value("--refresh-interval", "duration", help: "A refresh asked for within this of the source's last sync returns that sync instead of fetching again.", \.refreshInterval, .duration(zero: true)),
                .value("--max-connections-per-client", "n", help: "Connections one client address may hold open, of 1024 in all.", \.maxConnectionsPerClient, .number(1...1024, "a number of connections from 1 to 1024")),
                .value("--max-age", "duration", help: "GET /healthz is 503 when a source has not synced successfully within this (or its own --alert-after), as 'status --max-age'.", \.maxAge, .duration()),
                .value("--max-lag", "duration", help: "On a read-only follower, GET /healthz is 503 when its primary's heartbeat is older than this, as 'status --max-lag'.", \.maxLag, .duration()),
                .flag("--access-log", help: "One line per request on stderr: time, client, method, path and query, status, bytes, duration.", \.accessLog),
                Option(spec: OptionSpec(name: "--access-log-format", value: "text|json", help: "The access log's lines as text or json; implies --access-log.", completion: .choices(["text", "json"])),
                       land: { serve, values, command throws(UsageError) in
                           serve.accessLogFormat = try ValueParser<String>.choice(["text", "json"]).parse(values.last!, "--access-log-format", command)
                           serve.accessLog = true
                       },
                       shownDefault: { $0.accessLogFormat }),
            ]) { serve, positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            // Rows and their history are for this machine unless a token guards them.
            if serve.tokenEnv == nil, !SourceRules.isLoopback(serve.host) {
                throw UsageError(message: "'--listen \(serve.host)' is reachable from other machines: give '--token-env VAR' too, so every request needs that token, or listen on 127.0.0.1.", command: command)
            }
            return .serve(serve)
        },
        CommandDeclaration(CommandSpec(
            name: "metrics",
            overview: "Print every source's freshness and sync figures in the Prometheus text format.",
            examples: ["cache metrics --textfile /var/lib/node_exporter/textfile_collector/cache.prom"]),
            start: Printing(),
            options: [.value("--textfile", "path", help: "Write them to this file instead (atomically, for node_exporter's textfile collector).",
                             completion: .file, \.path, .text)]) { printing, positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .metrics(textfile: printing.path)
        },
        CommandDeclaration(CommandSpec(
            name: "history",
            overview: "List the sync runs, newest first: when, source, outcome, inserted/updated/deleted, HTTP status, bytes, duration, error.",
            arguments: [ArgumentSpec(label: "<name>", help: "Only this source's runs.", optional: true, completion: .sources)],
            examples: ["cache history", "cache history bank --limit 5 --json"]),
            start: Printing(),
            options: [.value("--limit", "n", help: "At most n runs.", \.limit, .count), .flag("--json", help: "Print a JSON array.", \.json)]) { printing, positionals, command throws(UsageError) in
            .history(source: try Positionals.atMostOne(positionals, command), limit: printing.limit, json: printing.json)
        },
        CommandDeclaration(CommandSpec(
            name: "diff",
            overview: "Show what syncs changed: rows inserted, updated (fields before and after) and removed. Default: the newest run that changed anything.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources)],
            exclusive: [["--run", "--since"]],
            examples: ["cache diff bank --since 1d"]),
            start: Diffing(),
            options: [.value("--run", "n", help: "One run (numbers from 'cache history').", \.run, .number(1...Int.max, "a run number from 'cache history'")),
                      .value("--since", "duration", help: "Every run in the last duration, such as 1d.", \.since, .duration()),
                      .flag("--json", help: "Print a JSON array.", \.json)]) { diff, positionals, command throws(UsageError) in
            let selection: HistoryStore.Selection = diff.run.map { .run($0) } ?? diff.since.map { .since(seconds: $0) } ?? .latest
            return .diff(source: try Positionals.exactlyOne(positionals, "<name>", command), selection: selection, json: diff.json)
        },
        CommandDeclaration(CommandSpec(
            name: "log",
            overview: "Show one row's versions, newest first: when, which run, inserted/updated/removed (or loaded with a sync into an empty cache), and the fields that changed, before and after.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources),
                        ArgumentSpec(label: "<key>", help: "The row: a json or csv record's key, a joke's id, a transaction's id (or the source's name for its account header).")],
            examples: ["cache log jokes 42", "cache log repos 1296269 --json"]),
            start: Printing(), options: [.flag("--json", help: "Print a JSON array.", \.json)]) { printing, positionals, command throws(UsageError) in
            let (source, key) = try Positionals.two(positionals, ("<name>", "<key>"), command)
            return .log(source: source, key: key, json: printing.json)
        },
        CommandDeclaration(CommandSpec(
            name: "search",
            overview: "Search a source's text offline: jokes' setup and punchline, transactions' vendor, every string of json and csv records. Ranked best first, with a snippet per hit; case and accents do not matter. A source's first search builds its index; its syncs keep it in step from then on.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources),
                        ArgumentSpec(label: "<query>", help: "SQLite FTS5's query syntax: words, \"phrases\", prefix*, AND, OR, NOT.")],
            examples: ["cache search jokes 'chicken OR duck'", "cache search repos '\"command line\" NOT deprecated' --json"]),
            start: Command.Search(name: "", query: ""),
            options: [.flag("--json", help: "Print a JSON array: each hit's key (id for transactions), row, snippet and rank.", \.json),
                      .value("--limit", "n", help: "At most n hits.", \.limit, .count)]) { search, positionals, command throws(UsageError) in
            (search.name, search.query) = try Positionals.two(positionals, ("<name>", "<query>"), command, extra: "; quote a query of several words")
            return .search(search)
        },
    ] + imports + localEdits + [
        CommandDeclaration(CommandSpec(
            name: "export",
            overview: "Stream every row of a source with its stale flag; memory does not grow with the row count.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources)],
            exclusive: [["--json", "--csv", "--ndjson"]]),
            start: Command.ExportFormat.json,
            options: [.flag("--json", help: "One JSON array (the default).") { $0 = .json }, .flag("--csv", help: "CSV with a header row.") { $0 = .csv },
                      .flag("--ndjson", help: "One JSON object per line.") { $0 = .ndjson }]) { format, positionals, command throws(UsageError) in
            .export(source: try Positionals.exactlyOne(positionals, "<name>", command), format: format)
        },
        CommandDeclaration(CommandSpec(
            name: "sql",
            overview: "Run one read-only SQL query on the cache, offline. Statements that would write are refused.",
            arguments: [ArgumentSpec(label: "<query>", help: "One SQL statement, such as \"SELECT * FROM cached_jokes WHERE stale = 1\".")],
            exclusive: [["--json", "--csv"]],
            examples: ["cache sql \"SELECT vendor, sum(amount) FROM cached_transactions GROUP BY vendor\""]),
            start: Command.Format.human,
            options: [.flag("--json", help: "Print a JSON array of objects.") { $0 = .json }, .flag("--csv", help: "Print CSV with a header row.") { $0 = .csv }]) { format, positionals, command throws(UsageError) in
            .sql(query: try Positionals.exactlyOne(positionals, "<query>", command), format: format)
        },
        CommandDeclaration(CommandSpec(
            name: "check",
            overview: "Run SQLite's integrity check and foreign-key check, and show the schema version. Exit 74 when damaged.")) { positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .check
        },
        CommandDeclaration(CommandSpec(
            name: "backup",
            overview: "Write a consistent copy of the cache to a new file while syncs, pushes and serve go on (SQLite's VACUUM INTO, one moment of the file), checked as 'cache check' checks before it takes the path. A file already at the path is never replaced.",
            arguments: [ArgumentSpec(label: "<path>", help: "Where the copy goes: a new file, in a folder that exists.", completion: .file)],
            examples: ["cache backup \"$HOME/cache-before-upgrade.sqlite3\""])) { positionals, command throws(UsageError) in
            .backup(path: try Positionals.exactlyOne(positionals, "<path>", command))
        },
        CommandDeclaration(CommandSpec(
            name: "prune",
            overview: "Delete sync runs, and the change log entries of those runs, older than the given duration.",
            required: ["--keep"]),
            start: Printing(),
            options: [.value("--keep", "duration", help: "How much history to keep, such as 30d: 'list --as-of' answers for that long back.", \.keep, .duration())]) { printing, positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .prune(keepSeconds: printing.keep!)  // a required option
        },
        CommandDeclaration(CommandSpec(
            name: "reindex",
            overview: "Build the search index of sources from their cached rows, each in one transaction: ahead of their first search (which would build it), or again ('cache check' says when it is needed).",
            arguments: [ArgumentSpec(label: "<name>", help: "Sources to index (default: every source).", optional: true, repeated: true,
                                     completion: .sources)])) { positionals, _ throws(UsageError) in
            .reindex(names: positionals)
        },
        CommandDeclaration(CommandSpec(
            name: "version",
            overview: "Show the version of cache and of the SQLite and libcurl it runs with.",
            usesDatabase: false)) { positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .version
        },
        CommandDeclaration(CommandSpec(
            name: "completion",
            overview: "Print a shell completion script, made from the same table as the parser. Scripts/install puts them where each shell looks.",
            arguments: [ArgumentSpec(label: "<shell>", help: "bash, zsh or fish.", completion: .choices(Completions.shells))],
            examples: ["cache completion bash > ~/.local/share/bash-completion/completions/cache",
                       "cache completion zsh > ~/.zfunc/_cache",
                       "cache completion fish > ~/.config/fish/completions/cache.fish"],
            usesDatabase: false)) { positionals, command throws(UsageError) in
            .completion(shell: try ValueParser<String>.choice(Completions.shells).parse(try Positionals.exactlyOne(positionals, "<shell>", command), "<shell>", command))
        },
        CommandDeclaration(CommandSpec(
            name: "manpage",
            overview: "Print the man page (roff), made from the help. Scripts/install puts it in share/man/man1.",
            examples: ["cache manpage > cache.1 && man -l cache.1"],
            usesDatabase: false)) { positionals, command throws(UsageError) in
            try Positionals.none(positionals, command)
            return .manpage
        },
        CommandDeclaration(CommandSpec(
            name: "help",
            overview: "Show help for a subcommand.",
            arguments: [ArgumentSpec(label: "<subcommand>", help: "For example: sync, list, 'sources add'.", optional: true,
                                     completion: .commands)],
            usesDatabase: false)) { positionals, _ throws(UsageError) in
            let topic = positionals.joined(separator: " ")
            guard CommandTable.byName[topic] != nil else {
                throw UsageError(message: "No help for '\(topic)': it is not a command.", command: "help")
            }
            return .help(topic)
        },
    ]

    /// What help, usage, the completions and the man page read: each command's spec.
    static let commands: [CommandSpec] = declarations.map(\.spec)

    static let byDeclaredName: [String: CommandDeclaration] = Dictionary(uniqueKeysWithValues: declarations.map { ($0.spec.name, $0) })

    /// A source's options as `sources add` (and, with the switches that clear one, `sources
    /// set`) takes them, from the library's declarations (`SourceOption`), landing in `path`.
    static func sourceOptions<Parsed>(adding: Bool, _ path: WritableKeyPath<Parsed, SourceSettings>) -> [Option<Parsed>] {
        SourceOption.all.filter { !adding || $0.clears.isEmpty }.map { option in
            Option(spec: OptionSpec(name: option.flag, value: option.placeholder, repeatable: option.repeatable, help: option.help(adding: adding),
                                    completion: option.isFile ? .file : option.choices.map(Completion.choices) ?? .none)) { parsed, values, _ in
                parsed[keyPath: path].given[option.name] = option.isSwitch ? [] : option.repeatable ? values : [values.last!]
            }
        }
    }

    private static func sourceName(_ positionals: [String], _ command: String) throws(UsageError) -> String {
        let name = try Positionals.exactlyOne(positionals, "<name>", command)
        if let problem = SourceRules.nameProblem(name) { throw UsageError(message: problem, command: command) }
        return name
    }

    static let byName: [String: CommandSpec] = Dictionary(uniqueKeysWithValues: commands.map { ($0.name, $0) })

    static func spec(_ name: String) -> CommandSpec {
        guard let spec = byName[name] else { preconditionFailure("no command '\(name)' in the table") }
        return spec
    }

    /// The actions of `cache outbox` besides listing.
    static var outboxActions: [String] { commands.compactMap { $0.name.hasPrefix("outbox ") ? String($0.name.dropFirst(7)) : nil } }

    /// The subcommands of `cache sources`.
    static var sourcesSubcommands: [String] { spec("sources").subcommands.map(\.name) }
    /// The top-level commands.
    static var topLevel: [String] { spec("").subcommands.map(\.name) }
}
