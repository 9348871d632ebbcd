import FoundationEssentials
import Glibc
import OfflineCache

/// `cache list NAME`: the cached rows at once; when the source is stale, one background
/// refresh behind them, and on a terminal (or with `--wait`) the reconciled rows when it lands.
enum ListCommand {
    static func run(_ options: Command.List, _ context: Context) throws -> Int32 {
        let database = try context.openForReading()
        let source = try SourceStore(database).named(options.name)
        let reader = CacheReader(database)
        let read = { try reader.rows(of: source, staleOnly: options.staleOnly, limit: options.limit) }
        // The baseline comes before the staleness check, so a sync landing in between is seen.
        if let columns = options.columns {
            guard source.kind.keepsRecords else {
                let kinds = SourceKind.allCases.filter(\.keepsRecords).map(\.rawValue).joined(separator: " and ")
                throw UsageError(message: "'--columns' is for \(kinds) sources; '\(source.name)' is \(source.kind.rawValue).", command: "list")
            }
            let fields = try reader.viewColumns(of: source)
            if let unknown = columns.first(where: { !fields.contains($0) }) {
                throw UsageError(message: "No field '\(unknown)' in \(source.name)'s records; its fields: \(fields.dropFirst().dropLast(3).joined(separator: ", ")).", command: "list")
            }
        }
        let watcher = try RefreshWatcher(database, source: source.name)
        let console = context.console

        let interactive = console.stdoutIsTerminal && console.stderrIsTerminal && options.format == .human
        var refreshing = false
        var child: pid_t?
        let stale = try !options.offline && reader.isStale(source)
        if stale, let backoff = try reader.backoff(source) {
            // Failing upstreams are left alone until their backoff ends, by readers as by cron.
            if options.wait ?? interactive {
                console.err("cache: list \(source.name): not refreshing: backing off after failures; next try \(ListRendering.untilText(backoff.until))"
                    + (backoff.lastError.map { " (last error: \(TerminalSafe.escapeControl($0)))" } ?? ""))
            }
        } else if stale, let variable = source.missingToken(in: context.environment) {
            // A read from a shell without the source's secret starts nothing: that refresh could
            // only fail, and its failure would set a backoff cron then honours.
            console.err("cache: list \(source.name): not refreshing: the token variable \(variable) is not set in this environment; serving cached rows")
        } else if stale {
            refreshing = true
            // A refresh already in flight (a reader's, cron's, a person's) is the one to wait for.
            if try !watcher.refreshInFlight() {
                child = try BackgroundRefresh.start(source: source.name, databasePath: context.databasePath)
            }
        }

        guard refreshing, options.wait ?? interactive else {
            // JSON and CSV stream row by row, so memory stays flat at any size.
            let count = options.format == .human
                ? try printHuman(read(), console, columns: options.columns, keyField: source.layout?.singleKeyField)
                : try stream(reader, source, options, console)
            if count == 0 && !options.staleOnly, try !reader.hasSucceeded(source) {
                // Never fetched is not "no rows": a script must be able to tell them apart.
                console.err(refreshing
                    ? "Nothing cached for '\(source.name)' yet; a refresh has started."
                    : "Nothing cached for '\(source.name)' yet; run 'cache sync \(source.name)'.")
                return refreshing ? nothingYet : ExitCode.unavailable
            }
            return ExitCode.success
        }
        if interactive {
            LiveList(source: source, console: console, fieldChoice: options.columns, preview: try read(), read: read,
                     wait: { tick in try waitForLanding(watcher, child: child, tick: tick) }).run()
            return ExitCode.success
        }

        // --wait without a terminal: one answer, after the refresh.
        let landing = try waitForLanding(watcher, child: child, tick: { _ in })
        if let problem = LiveList.failureText(landing) {
            console.err("cache: list \(source.name): refresh failed: \(TerminalSafe.escapeControl(problem)); serving cached rows")
        }
        let count = options.format == .human ? try printHuman(read(), console, columns: options.columns, keyField: source.layout?.singleKeyField) : try stream(reader, source, options, console)
        // Nothing cached and the refresh failed: unavailable, as `sync` says it.
        if count == 0 && !options.staleOnly, try !reader.hasSucceeded(source) { return ExitCode.unavailable }
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
        try reader.forEachRow(of: source, staleOnly: options.staleOnly, limit: options.limit, asRecords: asRecords) { columns, row in
            // The README's list rows ("Output of `list`"), the same fields as `export`; the stale flag a boolean in JSON.
            let rowWriter = writer ?? RowBytes(names: columns, columns: Array(columns.indices),
                                               boolColumn: columns.firstIndex(of: "stale"),
                                               rawColumn: asRecords ? columns.firstIndex(of: "record") : nil)
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

    /// Polls until the refresh lands, or until nothing is left that could land it.
    static func waitForLanding(_ watcher: RefreshWatcher, child: pid_t?, tick: (Double) throws -> Void) throws -> RefreshWatcher.Landing? {
        let started = ContinuousClock.now
        let limit = Duration.seconds(SyncEngine.Options().timeout + 60)
        var childDone = child == nil
        while ContinuousClock.now - started < limit {
            if let landing = try watcher.landing() { return landing }
            if let child, !childDone { childDone = BackgroundRefresh.hasExited(child) }
            if childDone, try !watcher.refreshInFlight() {
                return try watcher.landing()  // one last look: it may have landed as the holder left
            }
            try tick(Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000)
            sleepSeconds(0.08)
        }
        return nil
    }
}
