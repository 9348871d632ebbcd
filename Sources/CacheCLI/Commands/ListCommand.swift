import Foundation
import OfflineCache

/// `cache list NAME`: the cached rows at once; when the source is stale, one background
/// refresh behind them, and on a terminal (or with `--wait`) the reconciled rows when it lands.
enum ListCommand {
    static func run(_ options: Command.List, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let source = try SourceStore(database).named(options.name)
        let reader = CacheReader(database)
        let read = { try reader.rows(of: source, staleOnly: options.staleOnly, limit: options.limit) }
        // The baseline comes before the staleness check, so a sync landing in between is seen.
        let watcher = try RefreshWatcher(database, source: source.name)
        let console = context.console

        let interactive = console.stdoutIsTerminal && console.stderrIsTerminal && options.format == .human
        var refreshing = false
        var child: pid_t?
        let stale = try !options.offline && reader.isStale(source)
        if stale, let backoff = try reader.backoff(source) {
            // Failing upstreams are left alone until their backoff ends, by readers as by cron.
            if options.wait ?? interactive {
                console.err("cache: list \(source.name): not refreshing: backing off after failures until \(backoff.until)"
                    + (backoff.lastError.map { " (last error: \(Context.escapeControl($0)))" } ?? ""))
            }
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
                ? try printHuman(read(), console)
                : try stream(reader, source, options, console)
            if count == 0 && !options.staleOnly {
                console.err(refreshing
                    ? "Nothing cached for '\(source.name)' yet; a refresh has started."
                    : "Nothing cached for '\(source.name)' yet; run 'cache sync \(source.name)'.")
            }
            return ExitCode.success
        }
        if interactive {
            LiveList(source: source, console: console, preview: try read(), read: read,
                     wait: { tick in try waitForLanding(watcher, child: child, tick: tick) }).run()
            return ExitCode.success
        }

        // --wait without a terminal: one answer, after the refresh.
        let landing = try waitForLanding(watcher, child: child, tick: { _ in })
        if let problem = failureText(landing) {
            console.err("cache: list \(source.name): refresh failed: \(Context.escapeControl(problem)); serving cached rows")
        }
        _ = options.format == .human ? try printHuman(read(), console) : try stream(reader, source, options, console)
        return ExitCode.success
    }

    private static func printHuman(_ rows: CachedRows, _ console: Console) -> Int {
        console.out(ListRendering(color: console.useColor).render(rows))
        return rows.count
    }

    /// Writes the rows as JSON or CSV while SQLite steps through them; returns how many.
    static func stream(_ reader: CacheReader, _ source: Source, _ options: Command.List, _ console: Console) throws -> Int {
        var count = 0
        let account = source.kind == .account
        if options.format == .json { console.out("[") }
        if options.format == .csv { console.out(account ? transactionHeader : jokeHeader) }
        var csv: RowBytes?
        try reader.forEachRow(of: source, staleOnly: options.staleOnly, limit: options.limit) { columns, row in
            if options.format == .json {
                if count > 0 { console.out(JSONValue.arraySeparator) }
                if account {
                    console.out { writeTransactionJSON(row, into: &$0) }
                } else {
                    console.out(jokeJSON(row).text)
                }
            } else {
                // SPEC.md's CSV columns: the view's, without age_s.
                let writer = csv ?? RowBytes(names: columns, columns: columns.indices.filter { columns[$0] != "age_s" })
                csv = writer
                console.out { writer.csv(row, into: &$0) }
            }
            count += 1
        }
        if options.format == .json { console.out("]\n") }
        return count
    }

    // The columns of CacheReader.forEachRow, as SPEC.md's list objects.
    static let transactionHeader = CSVText.row(["id", "source", "account", "type", "vendor", "amount", "date", "seen_at", "stale"])
    static let jokeHeader = CSVText.row(["id", "type", "setup", "punchline", "source", "seen_at", "stale"])

    /// A transaction's object, written from the statement's columns in place: the text
    /// `JSONValue.object` would write for the same fields.
    static func writeTransactionJSON(_ row: Statement, into out: inout [UInt8]) {
        func text(_ column: Int) { row.withText(column) { JSONBytes.string($0, into: &out) } }
        JSONBytes.literal("{\"id\": ", into: &out); text(0)
        JSONBytes.literal(", \"source\": ", into: &out); text(1)
        JSONBytes.literal(", \"account\": ", into: &out)
        if row.isNull(2) { JSONBytes.literal("null", into: &out) } else { text(2) }
        JSONBytes.literal(", \"type\": ", into: &out); JSONBytes.int(row.int(3), into: &out)
        JSONBytes.literal(", \"vendor\": ", into: &out); text(4)
        JSONBytes.literal(", \"amount\": ", into: &out); JSONBytes.double(row.double(5), into: &out)
        JSONBytes.literal(", \"date\": ", into: &out); text(6)
        JSONBytes.literal(", \"seen_at\": ", into: &out); text(7)
        JSONBytes.literal(", \"stale\": ", into: &out); JSONBytes.bool(row.int(9) != 0, into: &out)
        JSONBytes.literal("}", into: &out)
    }

    private static func jokeJSON(_ row: Statement) -> JSONValue {
        .object([
            ("id", .int(row.int(0))), ("type", .string(row.text(1) ?? "")), ("setup", .string(row.text(2) ?? "")),
            ("punchline", .string(row.text(3) ?? "")), ("source", .string(row.text(4) ?? "")),
            ("seen_at", .string(row.text(5) ?? "")), ("stale", .bool(row.int(7) != 0)),
        ])
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
            Thread.sleep(forTimeInterval: 0.08)
        }
        return nil
    }

    static func failureText(_ landing: RefreshWatcher.Landing?) -> String? {
        guard let landing else { return "the refresh ended without a result" }
        return landing.outcome == .failed ? (landing.error ?? "unknown error") : nil
    }
}
