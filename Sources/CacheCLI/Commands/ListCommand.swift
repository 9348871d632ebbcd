import FoundationEssentials
import Glibc
import OfflineCache

/// `cache list NAME`: the cached rows at once; when the source is stale, one background
/// refresh behind them, and on a terminal (or with `--wait`) the reconciled rows when it lands.
enum ListCommand {
    static func run(_ options: Command.List, _ context: Context) throws -> Int32 {
        if let moment = options.asOf { return try past(options, at: moment, context) }
        let database = try context.openForReading(source: options.name)
        let refresh = try RefreshBehindRead(database, source: options.name)
        let source = refresh.source
        let reader = CacheReader(database)
        let read = { try reader.rows(of: source, staleOnly: options.staleOnly, limit: options.limit) }
        try checkColumns(options, source, reader)
        let console = context.console
        let interactive = console.stdoutIsTerminal && console.stderrIsTerminal && options.format == .human
        let waits = options.wait ?? interactive

        // The refresh is the library's (`Cache.states` runs the same plan), but in a
        // detached `cache sync` process: this command answers and exits, the refresh lands after.
        // Read-only mode (a replica) never refreshes: its primary does.
        let plan = try refresh.plan(refresh: !options.offline && !context.readOnly, environment: context.environment)
        if let replica = context.replica, !options.offline, refresh.stale {
            // Not asked for read-only mode, so say why stale rows are not being refreshed.
            console.err("cache: list \(source.name): stale rows served, and no refresh starts: this file is a Litestream replica (\(replica) is beside it), which the primary's syncs reach")
        }
        var started: RefreshBehindRead.Started?
        switch plan {
        case .backingOff:
            if waits { console.err("cache: list \(source.name): \(TerminalSafe.escapeControl(plan.reason ?? ""))") }
        case .missingToken:
            // Said even without --wait: the refresh a script might count on is not coming.
            console.err("cache: list \(source.name): \(plan.reason ?? ""); serving cached rows")
        case .join, .start:
            started = try refresh.start(plan, runner: .detached(start: {
                try context.refreshLauncher.start(source.name, context.databasePath)
            }))
        case .none:
            break
        }

        guard let started, waits else {
            // Asked before the rows are read: a refresh landing between the two must not turn
            // "never fetched" into "fetched, and empty".
            let neverFetched = try !options.staleOnly && !reader.hasSucceeded(source)
            // JSON and CSV stream row by row, so memory stays flat at any size.
            let count = options.format == .human
                ? try printHuman(read(), console, columns: options.columns, keyField: source.layout?.singleKeyField)
                : try stream(reader, source, options, console)
            if count == 0 && neverFetched {
                // Never fetched is not "no rows": a script must be able to tell them apart.
                console.err(started != nil
                    ? "Nothing cached for '\(source.name)' yet; a refresh has started."
                    : "Nothing cached for '\(source.name)' yet; run 'cache sync \(source.name)'.")
                return started != nil ? nothingYet : ExitCode.unavailable
            }
            return ExitCode.success
        }
        if interactive {
            LiveList(source: source, console: console, fieldChoice: options.columns, preview: try read(), read: read,
                     stillCached: { try reader.cachedIDs(of: source, among: $0) }, wait: { tick in try refresh.wait(for: started, tick: tick) }).run()
            return ExitCode.success
        }

        // --wait without a terminal: one answer, after the refresh.
        if let problem = try refresh.wait(for: started) {
            console.err("cache: list \(source.name): refresh failed: \(TerminalSafe.escapeControl(problem.message)); serving cached rows")
        }
        let count = options.format == .human ? try printHuman(read(), console, columns: options.columns, keyField: source.layout?.singleKeyField) : try stream(reader, source, options, console)
        // Nothing cached and the refresh failed: unavailable, as `sync` says it.
        if count == 0 && !options.staleOnly, try !reader.hasSucceeded(source) { return ExitCode.unavailable }
        return ExitCode.success
    }

    /// `--columns` names fields the source's records have.
    private static func checkColumns(_ options: Command.List, _ source: Source, _ reader: CacheReader) throws {
        guard let columns = options.columns else { return }
        guard source.kind.keepsRecords else {
            let kinds = SourceKind.allCases.filter(\.keepsRecords).map(\.rawValue).joined(separator: " and ")
            throw UsageError(message: "'--columns' is for \(kinds) sources; '\(source.name)' is \(source.kind.rawValue).", command: "list")
        }
        let fields = try reader.viewColumns(of: source)
        if let unknown = columns.first(where: { !fields.contains($0) }) {
            throw UsageError(message: "No field '\(unknown)' in \(source.name)'s records; its fields: \(fields.dropFirst().dropLast(3).joined(separator: ", ")).", command: "list")
        }
    }

    /// `list --as-of`: the rows as they were, from the change log; nothing is refreshed.
    private static func past(_ options: Command.List, at moment: String, _ context: Context) throws -> Int32 {
        let database = try context.openForReading(source: options.name)
        let source = try SourceStore(database).named(options.name)
        try HistoryStore(database).checkAnswerable(source: source.name, at: moment)
        let reader = CacheReader(database)
        try checkColumns(options, source, reader)
        let count = options.format == .human
            ? try printHuman(reader.rows(of: source, staleOnly: options.staleOnly, limit: options.limit, asOf: moment), context.console,
                             columns: options.columns, keyField: source.layout?.singleKeyField)
            : try stream(reader, source, options, context.console)
        if count == 0 && !options.staleOnly { context.console.err("Nothing was cached for '\(source.name)' at \(moment).") }
        return ExitCode.success
    }

    /// `list` without `--wait` on a source never fetched, while its first refresh runs: ask again.
    static let nothingYet = ExitCode.temporaryFailure

    private static func printHuman(_ rows: CachedRows, _ console: Console, columns: [String]?, keyField: String?) -> Int {
        console.out(ListRendering(color: console.useColor, columns: console.terminalColumns, fieldChoice: columns,
                                  keyField: keyField).render(rows))
        return rows.count
    }

    /// Writes the rows as JSON or CSV while SQLite steps through them; returns how many.
    static func stream(_ reader: CacheReader, _ source: Source, _ options: Command.List, _ console: Console) throws -> Int {
        var count = 0
        if options.format == .json { console.out("[") }
        if options.format == .csv { console.out(CSVText.row(try reader.viewColumns(of: source))) }
        var writer: RowBytes?
        // A json source's records go into JSON whole, with their key and staleness.
        let asRecords = source.kind.keepsRecords && options.format == .json
        try reader.forEachRow(of: source, staleOnly: options.staleOnly, limit: options.limit, asRecords: asRecords,
                              asOf: options.asOf) { columns, row in
            // The list rows docs/reads.md shows ("Output of `list`"), the same fields as `export`; the stale flag a boolean in JSON.
            let rowWriter = writer ?? RowBytes.listRow(columns, asRecords: asRecords)
            writer = rowWriter
            if options.format == .json {
                if count > 0 { console.out(JSONValue.arraySeparator) }
                console.out { rowWriter.json(row, into: &$0) }
            } else {
                console.out { rowWriter.csv(row, into: &$0) }
            }
            count += 1
        }
        if options.format == .json { console.out("]\n") }
        return count
    }
}
