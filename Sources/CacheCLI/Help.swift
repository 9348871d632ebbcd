/// The help of every command. `cache help X`, `cache X --help` and `cache X -h` print the same.
enum Help {
    static let dbOption = ("--db <path>", "The database (default: $CACHE_DB, else $XDG_CACHE_HOME/cache/cache.sqlite3, else ~/.cache/cache/cache.sqlite3).")

    static let all: [String: CommandHelp] = [
        "": CommandHelp(
            name: "",
            overview: "Keep a local SQLite copy of JSON APIs: instant reads that work offline, refreshed behind your back.",
            usage: "cache [--db <path>] <subcommand> [options]",
            options: [dbOption, ("--version", "Show the version.")],
            subcommands: [
                ("sources", "Add, list and remove the upstreams to cache."),
                ("sync", "Fetch sources and reconcile them into the cache."),
                ("list", "Print one source's cached rows at once, with stale flags; refresh behind them."),
                ("status", "Show each source's rows, staleness and last sync."),
                ("help", "Show help for a subcommand."),
            ],
            examples: [
                "cache sources add jokes --kind jokes --url https://official-joke-api.appspot.com/jokes/ten",
                "cache sync",
                "cache list jokes --json",
            ]),
        "sources": CommandHelp(
            name: "sources",
            overview: "Add, list and remove sources: named upstream URLs of one kind.",
            usage: "cache sources <subcommand>",
            subcommands: [
                ("add", "Add a source."),
                ("list", "List the sources."),
                ("remove", "Remove a source and everything cached from it."),
            ]),
        "sources add": CommandHelp(
            name: "sources add",
            overview: "Add a source.",
            usage: "cache sources add <name> --kind account|jokes --url <url> [--ttl <duration>] [--mode replace|merge] [--header \"Name: value\"]... [--token-env <var>] [--max-bytes <n>]",
            arguments: [("<name>", "A name for the source: letters, digits, '-', '_' and '.'.")],
            options: [
                ("--kind <kind>", "account ({status, message, body} envelope) or jokes (Official Joke API)."),
                ("--url <url>", "An http, https or file URL."),
                ("--ttl <duration>", "How long a row stays fresh after upstream confirms it: 90, 90s, 15m, 2h, 1d (default: 15m)."),
                ("--mode <mode>", "replace (the response is the whole truth) or merge (a sample; never remove). Default: replace for account, merge for jokes."),
                ("--header <header>", "An extra request header, \"Name: value\". Repeatable."),
                ("--token-env <var>", "Send $VAR as a bearer token at sync time; only the variable's name is stored."),
                ("--max-bytes <n>", "Refuse bodies larger than this (default: 64 MiB)."),
                dbOption,
            ],
            examples: ["cache sources add bank --kind account --url http://127.0.0.1:8080/account --ttl 1h"]),
        "sources list": CommandHelp(
            name: "sources list",
            overview: "List the sources.",
            usage: "cache sources list [--json]",
            options: [("--json", "Print a JSON array."), dbOption]),
        "sources remove": CommandHelp(
            name: "sources remove",
            overview: "Remove a source with its cached rows and sync history.",
            usage: "cache sources remove <name>",
            arguments: [("<name>", "The source to remove.")],
            options: [dbOption]),
        "sync": CommandHelp(
            name: "sync",
            overview: "Fetch sources and reconcile them into the cache, each in one transaction. Bad data never replaces good data.",
            usage: "cache sync [<name> ...] [--if-stale] [--json] [--quiet] [--timeout <duration>]",
            arguments: [("<name>", "Sources to sync (default: every source).")],
            options: [
                ("--if-stale", "Skip sources whose last sync is still within their TTL (the cron form)."),
                ("--json", "Print one JSON object per source."),
                ("--quiet", "Print nothing on success; errors still go to stderr."),
                ("--timeout <duration>", "Give up on a fetch after this long (default: 30s)."),
                dbOption,
            ],
            examples: ["cache sync", "cache sync bank --json", "cache sync --if-stale --quiet   # from cron"]),
        "list": CommandHelp(
            name: "list",
            overview: "Print one source's cached rows at once, each with its stale flag. When the source is stale, start one background refresh; on a terminal, redraw the list when it lands.",
            usage: "cache list <name> [--stale] [--limit <n>] [--json | --csv] [--offline] [--wait | --no-wait]",
            arguments: [("<name>", "The source.")],
            options: [
                ("--stale", "Only rows upstream has not confirmed within the TTL."),
                ("--limit <n>", "At most n rows."),
                ("--json", "Print a JSON array."),
                ("--csv", "Print CSV with a header row."),
                ("--offline", "Read the cache only; start no refresh."),
                ("--wait", "Wait for the refresh to land, also without a terminal (then print once, after it)."),
                ("--no-wait", "Never wait, even on a terminal."),
                dbOption,
            ],
            examples: ["cache list bank", "cache list jokes --stale --json"]),
        "status": CommandHelp(
            name: "status",
            overview: "Show each source's rows, stale rows, last success, last attempt and last error.",
            usage: "cache status [--json]",
            options: [("--json", "Print a JSON array."), dbOption]),
        "help": CommandHelp(
            name: "help",
            overview: "Show help for a subcommand.",
            usage: "cache help [<subcommand>]",
            arguments: [("<subcommand>", "For example: sync, list, 'sources add'.")]),
    ]
}
