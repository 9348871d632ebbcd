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

    /// The options `sources add` and `sources set` share, from the library's declarations of a
    /// source's options (`SourceOption`); the switches that clear a setting are for `set` only.
    static func sourceOptions(adding: Bool) -> [OptionSpec] {
        SourceOption.all.filter { !adding || $0.clears.isEmpty }.map { option in
            OptionSpec(name: option.flag, value: option.placeholder, repeatable: option.repeatable, help: option.help(adding: adding),
                       completion: option.isFile ? .file : option.choices.map(Completion.choices) ?? .none)
        }
    }

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

    static let commands: [CommandSpec] = [
        CommandSpec(
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
                ("export", "Stream every row of a source with its stale flag."),
                ("sql", "Run one read-only SQL query on the cache."),
                ("check", "Check the database's integrity and schema."),
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
            ]),
        CommandSpec(
            name: "sources",
            overview: "Add, change, list and remove sources: named upstream URLs of one kind.",
            subcommands: [
                ("add", "Add a source."),
                ("set", "Change a source, keeping its rows and history."),
                ("list", "List the sources."),
                ("export", "Print the sources as one JSON document, for version control and 'cache apply'."),
                ("remove", "Remove a source and everything cached from it."),
            ]),
        CommandSpec(
            name: "sources add",
            overview: "Add a source.",
            arguments: [ArgumentSpec(label: "<name>", help: "A name for the source: letters, digits, '-', '_' and '.'.")],
            options: [OptionSpec(name: "--kind", value: "kind",
                                 help: kindsHelp,
                                 completion: .choices(SourceKind.allCases.map(\.rawValue)))]
                + sourceOptions(adding: true),
            required: ["--kind", "--url"],
            examples: ["cache sources add bank --kind account --url http://127.0.0.1:8080/account --ttl 1h",
                       "cache sources add repos --kind json --url https://api.github.com/users/octocat/repos --key id --next link",
                       "cache sources add people --kind json --url https://swapi.dev/api/people/ --rows '$.results' --key url --next '$.next'",
                       "cache sources add stations --kind csv --url https://example.org/stations.csv --key id --delimiter ';'"]),
        CommandSpec(
            name: "sources set",
            overview: "Change a source in place: its rows, sync history and run numbers stay. Only the options given change.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source to change.", completion: .sources)],
            options: sourceOptions(adding: false),
            exclusive: clearingPairs,
            examples: ["cache sources set bank --ttl 30m", "cache sources set bank --url https://bank.example/v2/account"]),
        CommandSpec(
            name: "sources list",
            overview: "List the sources.",
            options: [OptionSpec(name: "--json", help: "Print a JSON array.")]),
        CommandSpec(
            name: "sources export",
            overview: "Print the sources as one JSON document, sorted and stable: {\"sources\": [{\"name\": …, \"kind\": …, \"url\": …, \"ttl\": \"1h\", …}]}. Each key is an option of 'sources add' without its dashes, each value as the option takes it; options at their defaults are left out. Only the names of environment variables are written, never their values.",
            arguments: [ArgumentSpec(label: "<name>", help: "The sources to export (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            examples: ["cache sources export > sources.json", "cache --db new.sqlite3 apply sources.json"]),
        CommandSpec(
            name: "apply",
            overview: "Make the cache's sources match a sources file, as 'sources export' writes it: a source only in the file is added; one whose options differ is changed as 'sources set' changes it (rows, history and run numbers kept); one only in the cache is kept unless --prune. The whole file is checked first, and every change is made in one transaction.",
            arguments: [ArgumentSpec(label: "<file>", help: "The sources file ('-' for standard input).", completion: .file)],
            options: [
                OptionSpec(name: "--plan", help: "Print what would change, and change nothing."),
                OptionSpec(name: "--prune", help: "Remove the sources the file does not have, with their rows and history (asks first; see --yes)."),
                OptionSpec(name: "--yes", short: "-y", help: "Remove what --prune removes without asking (needed when stdin is not a terminal)."),
                OptionSpec(name: "--json", help: "Print one JSON object per source: {\"source\", \"action\", \"changes\"}."),
            ],
            examples: ["cache apply sources.json --plan", "cache apply sources.json", "cache apply sources.json --prune"]),
        CommandSpec(
            name: "sources remove",
            overview: "Remove a source with its cached rows and sync history.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source to remove.", completion: .sources)],
            options: [OptionSpec(name: "--yes", short: "-y", help: "Remove without asking (needed when stdin is not a terminal).")]),
        CommandSpec(
            name: "sync",
            overview: "Fetch sources and reconcile them into the cache, each in one transaction. Bad data never replaces good data.",
            arguments: [ArgumentSpec(label: "<name>", help: "Sources to sync (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            options: [
                OptionSpec(name: "--if-stale", help: "Skip sources whose last sync is still within their TTL, and sources backing off after failures (the cron form)."),
                OptionSpec(name: "--json", help: "Print one JSON object per source."),
                OptionSpec(name: "--quiet", short: "-q", help: "Print nothing on success; errors still go to stderr."),
                OptionSpec(name: "--timeout", value: "duration", help: "Give up on a source after this long, retries included (default: 30s)."),
                OptionSpec(name: "--parallel", value: "n", help: "Fetch up to n sources at once; writes still go one at a time (default: 4)."),
                OptionSpec(name: "--plan", help: "Fetch and reconcile, then print what would change and whether the removal guard would hold it; write nothing."),
                OptionSpec(name: "--accept-removals", help: "Apply a sync the removal guard would hold, this once."),
                OptionSpec(name: "--full", help: "Sync incremental sources in full, removing what upstream no longer has (through the removal guard)."),
            ],
            exclusive: [["--plan", "--accept-removals"]],
            examples: ["cache sync", "cache sync bank --json", "cache sync --if-stale --quiet   # from cron", "cache sync bank --plan"]),
        CommandSpec(
            name: "list",
            overview: "Print one source's cached rows at once, each with its stale flag. When the source is stale, start one background refresh; on a terminal, redraw the list when it lands. Without a name, list the sources.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", optional: true, completion: .sources)],
            options: [
                OptionSpec(name: "--stale", help: "Only rows upstream has not confirmed within the TTL."),
                OptionSpec(name: "--limit", value: "n", help: "At most n rows."),
                OptionSpec(name: "--json", help: "Print a JSON array."),
                OptionSpec(name: "--csv", help: "Print CSV with a header row."),
                OptionSpec(name: "--offline", help: "Read the cache only; start no refresh."),
                OptionSpec(name: "--wait", help: "Wait for the refresh to land, also without a terminal (then print once, after it)."),
                OptionSpec(name: "--no-wait", help: "Never wait, even on a terminal."),
                OptionSpec(name: "--columns", value: "fields", help: "json and csv sources: the fields to show, comma separated (default: as many as fit)."),
                OptionSpec(name: "--as-of", value: "time", help: "The rows as they were then, from the change log: a time such as 2026-11-30T09:00:00Z, or how long ago, such as 2h or 3d. Starts no refresh; stale flags are as of then."),
            ],
            exclusive: [["--json", "--csv"], ["--wait", "--no-wait"], ["--as-of", "--wait"]],
            examples: ["cache list bank", "cache list jokes --stale --json", "cache list bank --as-of 2026-11-30T09:00:00Z"]),
        CommandSpec(
            name: "status",
            overview: "Show each source's rows, stale rows, last success, last attempt and last error. With --max-age, check that each source succeeded recently: for monitors and health checks.",
            arguments: [ArgumentSpec(label: "<name>", help: "Only these sources (default: every source).", optional: true, repeated: true,
                                     completion: .sources)],
            options: [
                OptionSpec(name: "--json", help: "Print a JSON array."),
                OptionSpec(name: "--max-age", value: "duration", help: "Exit 1, naming each source and since when, if any has not synced successfully within this (or its own --alert-after); else print one line and exit 0."),
                OptionSpec(name: "--max-lag", value: "duration", help: "On a read-only follower: exit 1, saying by how much, if its primary's newest heartbeat (stamped by every 'cache sync' there) is older than this; a primary always passes."),
            ],
            examples: ["cache status", "cache status --max-age 2h   # from a monitor"]),
        CommandSpec(
            name: "serve",
            overview: "Serve the cache over HTTP until SIGTERM or SIGINT: GET / (in a browser, the live page: every source's rows, redrawn as syncs land), GET /sources, /sources/NAME/rows (JSON; .csv and .ndjson stream them all), /sources/NAME/rows/KEY, /events (Server-Sent Events), /healthz, /metrics and /openapi.json; POST /sources/NAME/refresh. Rows come at once with ETag, Cache-Control, Age and Cache-Status; a stale read starts one refresh behind it. Prints 'serving http://HOST:PORT' once it listens.",
            options: [
                OptionSpec(name: "--listen", value: "host:port", help: "Where to listen (default: 127.0.0.1:8765; port 0 picks a free one). An address other machines reach needs --token-env."),
                OptionSpec(name: "--token-env", value: "var", help: "Every request needs 'Authorization: Bearer' and this variable's value."),
                OptionSpec(name: "--cors", value: "origin", repeatable: true, help: "Let pages from this origin read the responses and refresh (CORS), such as https://dash.example.org; repeat it or give a list; * lets any page read, never change."),
                OptionSpec(name: "--host-name", value: "name", repeatable: true, help: "Also answer requests for this host name (a proxy's or a DNS name); any other Host is 421, against DNS rebinding."),
                OptionSpec(name: "--refresh-interval", value: "duration", help: "A refresh asked for within this of the source's last sync returns that sync instead of fetching again (default: 10s)."),
                OptionSpec(name: "--max-connections-per-client", value: "n", help: "Connections one client address may hold open (default: 512, of 1024 in all)."),
                OptionSpec(name: "--max-age", value: "duration", help: "GET /healthz is 503 when a source has not synced successfully within this (or its own --alert-after), as 'status --max-age'."),
                OptionSpec(name: "--max-lag", value: "duration", help: "On a read-only follower, GET /healthz is 503 when its primary's heartbeat is older than this, as 'status --max-lag'."),
                OptionSpec(name: "--access-log", help: "One line per request on stderr: time, client, method, path and query, status, bytes, duration."),
                OptionSpec(name: "--access-log-format", value: "text|json", help: "The access log's lines as text (the default) or json; implies --access-log.", completion: .choices(["text", "json"])),
            ],
            examples: ["cache serve   # then open http://127.0.0.1:8765/ in a browser", "curl -s 'http://127.0.0.1:8765/sources/jokes/rows?limit=5'",
                       "CACHE_SERVE_TOKEN=secret cache serve --listen 0.0.0.0:8765 --token-env CACHE_SERVE_TOKEN"]),
        CommandSpec(
            name: "metrics",
            overview: "Print every source's freshness and sync figures in the Prometheus text format.",
            options: [OptionSpec(name: "--textfile", value: "path", help: "Write them to this file instead (atomically, for node_exporter's textfile collector).",
                                 completion: .file)],
            examples: ["cache metrics --textfile /var/lib/node_exporter/textfile_collector/cache.prom"]),
        CommandSpec(
            name: "history",
            overview: "List the sync runs, newest first: when, source, outcome, inserted/updated/deleted, HTTP status, bytes, duration, error.",
            arguments: [ArgumentSpec(label: "<name>", help: "Only this source's runs.", optional: true, completion: .sources)],
            options: [OptionSpec(name: "--limit", value: "n", help: "At most n runs."), OptionSpec(name: "--json", help: "Print a JSON array.")],
            examples: ["cache history", "cache history bank --limit 5 --json"]),
        CommandSpec(
            name: "diff",
            overview: "Show what syncs changed: rows inserted, updated (fields before and after) and removed. Default: the newest run that changed anything.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources)],
            options: [OptionSpec(name: "--run", value: "n", help: "One run (numbers from 'cache history')."),
                      OptionSpec(name: "--since", value: "duration", help: "Every run in the last duration, such as 1d."),
                      OptionSpec(name: "--json", help: "Print a JSON array.")],
            exclusive: [["--run", "--since"]],
            examples: ["cache diff bank --since 1d"]),
        CommandSpec(
            name: "log",
            overview: "Show one row's versions, newest first: when, which run, inserted/updated/removed (or loaded with a sync into an empty cache), and the fields that changed, before and after.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources),
                        ArgumentSpec(label: "<key>", help: "The row: a json or csv record's key, a joke's id, a transaction's id (or the source's name for its account header).")],
            options: [OptionSpec(name: "--json", help: "Print a JSON array.")],
            examples: ["cache log jokes 42", "cache log repos 1296269 --json"]),
        CommandSpec(
            name: "search",
            overview: "Search a source's text offline: jokes' setup and punchline, transactions' vendor, every string of json and csv records. Ranked best first, with a snippet per hit; case and accents do not matter. A source's first search builds its index; its syncs keep it in step from then on.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources),
                        ArgumentSpec(label: "<query>", help: "SQLite FTS5's query syntax: words, \"phrases\", prefix*, AND, OR, NOT.")],
            options: [OptionSpec(name: "--json", help: "Print a JSON array: each hit's key (id for transactions), row, snippet and rank."),
                      OptionSpec(name: "--limit", value: "n", help: "At most n hits (default: 20).")],
            examples: ["cache search jokes 'chicken OR duck'", "cache search repos '\"command line\" NOT deprecated' --json"]),
        CommandSpec(
            name: "export",
            overview: "Stream every row of a source with its stale flag; memory does not grow with the row count.",
            arguments: [ArgumentSpec(label: "<name>", help: "The source.", completion: .sources)],
            options: [OptionSpec(name: "--json", help: "One JSON array (the default)."), OptionSpec(name: "--csv", help: "CSV with a header row."),
                      OptionSpec(name: "--ndjson", help: "One JSON object per line.")],
            exclusive: [["--json", "--csv", "--ndjson"]]),
        CommandSpec(
            name: "sql",
            overview: "Run one read-only SQL query on the cache, offline. Statements that would write are refused.",
            arguments: [ArgumentSpec(label: "<query>", help: "One SQL statement, such as \"SELECT * FROM cached_jokes WHERE stale = 1\".")],
            options: [OptionSpec(name: "--json", help: "Print a JSON array of objects."), OptionSpec(name: "--csv", help: "Print CSV with a header row.")],
            exclusive: [["--json", "--csv"]],
            examples: ["cache sql \"SELECT vendor, sum(amount) FROM cached_transactions GROUP BY vendor\""]),
        CommandSpec(
            name: "check",
            overview: "Run SQLite's integrity check and foreign-key check, and show the schema version. Exit 74 when damaged."),
        CommandSpec(
            name: "prune",
            overview: "Delete sync runs, and the change log entries of those runs, older than the given duration.",
            options: [OptionSpec(name: "--keep", value: "duration", help: "How much history to keep, such as 30d: 'list --as-of' answers for that long back.")],
            required: ["--keep"]),
        CommandSpec(
            name: "reindex",
            overview: "Build the search index of sources from their cached rows, each in one transaction: ahead of their first search (which would build it), or again ('cache check' says when it is needed).",
            arguments: [ArgumentSpec(label: "<name>", help: "Sources to index (default: every source).", optional: true, repeated: true,
                                     completion: .sources)]),
        CommandSpec(
            name: "version",
            overview: "Show the version of cache and of the SQLite and libcurl it runs with.",
            usesDatabase: false),
        CommandSpec(
            name: "completion",
            overview: "Print a shell completion script, made from the same table as the parser. Scripts/install puts them where each shell looks.",
            arguments: [ArgumentSpec(label: "<shell>", help: "bash, zsh or fish.", completion: .choices(Completions.shells))],
            examples: ["cache completion bash > ~/.local/share/bash-completion/completions/cache",
                       "cache completion zsh > ~/.zfunc/_cache",
                       "cache completion fish > ~/.config/fish/completions/cache.fish"],
            usesDatabase: false),
        CommandSpec(
            name: "manpage",
            overview: "Print the man page (roff), made from the help. Scripts/install puts it in share/man/man1.",
            examples: ["cache manpage > cache.1 && man -l cache.1"],
            usesDatabase: false),
        CommandSpec(
            name: "help",
            overview: "Show help for a subcommand.",
            arguments: [ArgumentSpec(label: "<subcommand>", help: "For example: sync, list, 'sources add'.", optional: true,
                                     completion: .commands)],
            usesDatabase: false),
    ]

    static let byName: [String: CommandSpec] = Dictionary(uniqueKeysWithValues: commands.map { ($0.name, $0) })

    static func spec(_ name: String) -> CommandSpec {
        guard let spec = byName[name] else { preconditionFailure("no command '\(name)' in the table") }
        return spec
    }

    /// The subcommands of `cache sources`.
    static var sourcesSubcommands: [String] { spec("sources").subcommands.map(\.name) }
    /// The top-level commands.
    static var topLevel: [String] { spec("").subcommands.map(\.name) }
}
