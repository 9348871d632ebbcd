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
        let preview = try read()
        let console = context.console

        let interactive = console.stdoutIsTerminal && console.stderrIsTerminal && options.format == .human
        var refreshing = false
        var child: pid_t?
        if !options.offline, try reader.isStale(source), let backoff = try reader.backoff(source) {
            // Failing upstreams are left alone until their backoff ends, by readers as by cron.
            if options.wait ?? interactive {
                console.err("cache: list \(source.name): not refreshing: backing off after failures until \(backoff.until)"
                    + (backoff.lastError.map { " (last error: \(Context.escapeControl($0)))" } ?? ""))
            }
        } else if !options.offline, try reader.isStale(source) {
            refreshing = true
            // A refresh already in flight (a reader's, cron's, a person's) is the one to wait for.
            if try !watcher.refreshInFlight() {
                child = try BackgroundRefresh.start(source: source.name, databasePath: context.databasePath)
            }
        }

        guard refreshing, options.wait ?? interactive else {
            if preview.count == 0 && !options.staleOnly {
                console.err(refreshing
                    ? "Nothing cached for '\(source.name)' yet; a refresh has started."
                    : "Nothing cached for '\(source.name)' yet; run 'cache sync \(source.name)'.")
            }
            printRows(preview, options.format, console)
            return ExitCode.success
        }

        if interactive {
            LiveList(source: source, console: console, preview: preview, read: read,
                     wait: { tick in try waitForLanding(watcher, child: child, tick: tick) }).run()
            return ExitCode.success
        }

        // --wait without a terminal: one answer, after the refresh.
        let landing = try waitForLanding(watcher, child: child, tick: { _ in })
        if let problem = failureText(landing) {
            console.err("cache: list \(source.name): refresh failed: \(Context.escapeControl(problem)); serving cached rows")
        }
        printRows(try read(), options.format, console)
        return ExitCode.success
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

    static func printRows(_ rows: CachedRows, _ format: Command.Format, _ console: Console) {
        switch format {
        case .json: console.out(json(rows))
        case .csv: console.out(csv(rows))
        case .human: console.out(ListRendering(color: console.useColor).render(rows))
        }
    }

    static func json(_ rows: CachedRows) -> String {
        switch rows {
        case .account(_, let transactions):
            return JSONValue.lines(transactions.map { row in
                .object([
                    ("id", .string(row.id)), ("source", .string(row.source)), ("account", .optional(row.account)),
                    ("type", .int(row.type)), ("vendor", .string(row.vendor)), ("amount", .double(row.amount)),
                    ("date", .string(row.date)), ("seen_at", .string(row.seenAt)), ("stale", .bool(row.stale)),
                ])
            })
        case .jokes(let jokes):
            return JSONValue.lines(jokes.map { row in
                .object([
                    ("id", .int(row.id)), ("type", .string(row.type)), ("setup", .string(row.setup)),
                    ("punchline", .string(row.punchline)), ("source", .string(row.source)),
                    ("seen_at", .string(row.seenAt)), ("stale", .bool(row.stale)),
                ])
            })
        }
    }

    static func csv(_ rows: CachedRows) -> String {
        switch rows {
        case .account(_, let transactions):
            return CSVText.row(["id", "source", "account", "type", "vendor", "amount", "date", "seen_at", "stale"])
                + transactions.map {
                    CSVText.row([$0.id, $0.source, $0.account ?? "", String($0.type), $0.vendor, JSONValue.number($0.amount),
                                 $0.date, $0.seenAt, $0.stale ? "1" : "0"])
                }.joined()
        case .jokes(let jokes):
            return CSVText.row(["id", "type", "setup", "punchline", "source", "seen_at", "stale"])
                + jokes.map {
                    CSVText.row([String($0.id), $0.type, $0.setup, $0.punchline, $0.source, $0.seenAt, $0.stale ? "1" : "0"])
                }.joined()
        }
    }
}
