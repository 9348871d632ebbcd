import FoundationEssentials
import Glibc
import OfflineCache

enum SyncCommand {
    static func run(_ options: Command.Sync, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let store = SourceStore(database)
        // A name given twice is synced once.
        var seen = Set<String>()
        let names = options.names.filter { seen.insert($0).inserted }
        let sources = try names.isEmpty ? store.all() : names.map { name throws(CacheError) in
            try store.named(name)
        }
        let console = context.console
        if sources.isEmpty && !options.quiet {
            console.err("No sources to sync. Add one with 'cache sources add'.")
        }
        var engineOptions = SyncEngine.Options(onlyIfStale: options.ifStale)
        engineOptions.plan = options.plan
        engineOptions.acceptRemovals = options.acceptRemovals
        engineOptions.full = options.full
        if let timeout = options.timeout { engineOptions.timeout = timeout }
        let workers = min(options.parallel, sources.count)
        // One progress line can follow one sync: shown when sources sync one at a time.
        let showProgress = console.stderrIsTerminal && !options.quiet && workers <= 1

        var exitCode = ExitCode.success
        // Local edits go first, so the fetch brings the upstream's version of them; with
        // --if-stale only those whose backoff has passed.
        if !options.noPush && !options.plan {
            let pending = try OutboxStore(database).edits(of: sources.map(\.name)).filter { $0.state == .queued || $0.state == .inFlight }
            if !pending.isEmpty {
                var pusher = OutboxCommands.pusher(context)
                if let timeout = options.timeout { pusher.timeout = timeout }
                let pushed = try pusher.push(sources, dueOnly: options.ifStale)
                exitCode = OutboxCommands.finish(pushed, json: false, quiet: options.quiet || options.json, context)
                // Still queued after a failure that may pass is the upstream's trouble, said by the sync too.
                if exitCode == ExitCode.temporaryFailure { exitCode = ExitCode.success }
            }
        }
        var reports: [SyncReport] = []
        // Reports are printed in the order the sources were named, each as soon as it and
        // those before it are done.
        let report: (Source, SyncReport) -> Void = { source, report in
            reports.append(report)
            if let failure = report.failure {
                console.err("cache: sync \(source.name): \(TerminalSafe.escapeControl(report.errorText ?? failure.description))")
                if exitCode == ExitCode.success {
                    exitCode = ExitCode.of(failure, hadCachedRows: report.hadCachedRows)
                }
            } else if !options.json && !options.quiet {
                console.out(line(for: report) + "\n")
            }
            // Skipped while still failing or held: the exit status stays what the trouble's was
            // (75 or 65), so a timer's status does not flip to 0 and back through one outage.
            if let trouble = report.skippedWhile, exitCode == ExitCode.success {
                exitCode = trouble == .held ? ExitCode.dataError : ExitCode.temporaryFailure
            }
        }
        if workers <= 1 {
            let engine = SyncEngine(database: database, fetcher: context.fetcher, environment: context.environment)
            for source in sources {
                var sourceOptions = engineOptions
                if showProgress { sourceOptions.progress = ProgressLine(source: source.name).update }
                report(source, engine.sync(source, options: sourceOptions))
            }
        } else {
            engineOptions.writeGate = WriteGate()
            // Each worker its own connection: a connection is used by one thread at a time.
            let connections = try (0..<workers).map { _ in try context.open(create: false) }
            // A sibling's reconcile may hold the write lock for seconds (the gate orders the
            // reconciles; leases and failure records still wait on SQLite's lock): wait as
            // long as a sync may last, not the default 5 s.
            let wait = Int32(min((engineOptions.timeout + 60) * 1000, Double(Int32.max)))
            for connection in connections { connection.connection.setBusyTimeout(milliseconds: wait) }
            let results = ParallelSyncs(sources: sources, databases: connections, options: engineOptions, fetcher: context.fetcher,
                                        environment: context.environment)
            for (index, source) in sources.enumerated() {
                report(source, results.wait(for: index))
            }
        }
        // The heartbeat a follower measures its lag by: every sync that could write, even one
        // that found nothing stale (not a --plan, which writes nothing).
        if !options.plan { try? Heartbeat(database).beat() }
        if options.json && !(options.quiet && exitCode == ExitCode.success) {
            console.out(JSONValue.lines(reports.map(\.json)))
        }
        return exitCode
    }

    static func line(for report: SyncReport) -> String {
        switch report.outcome {
        case .updated:
            let c = report.counts
            return "\(report.source): updated (\(c.inserted) inserted, \(c.updated) updated, \(c.deleted) deleted) in \(report.durationMs) ms" + repeated(report)
        case .unchanged: return "\(report.source): unchanged in \(report.durationMs) ms" + repeated(report)
        case .skipped: return "\(report.source): skipped (\(report.note ?? "not due"))"
        case .failed: return "\(report.source): failed: \(report.errorText ?? "unknown error")"
        case .held: return "\(report.source): \(report.errorText ?? "held")"
        case .planned: return planText(for: report)
        }
    }

    /// Repeated records are kept once, never merged without a word.
    static func repeated(_ report: SyncReport) -> String {
        let n = report.repeatedRecords
        return n == 0 ? "" : "; \(n) record\(n == 1 ? "" : "s") came more than once, the same each time, and \(n == 1 ? "is" : "are") cached once"
    }

    /// `sync --plan`: the counts, each change as `cache diff` shows it, and the guard's verdict.
    static func planText(for report: SyncReport) -> String {
        let c = report.counts
        var lines = ["\(report.source): plan: \(c.inserted) to insert, \(c.updated) to update, \(c.deleted) to remove (nothing written)"]
        for change in report.plan ?? [] { lines.append("  " + InspectCommands.describe(change)) }
        if let reason = report.wouldHold {
            lines.append("  the removal guard would hold this sync: \(reason); 'cache sync \(report.source) --accept-removals' applies it")
        }
        return lines.joined(separator: "\n")
    }

}

/// Syncs sources on a few threads at once: the fetches overlap, the writes take turns
/// (`WriteGate`). Each source's report is waited for by its index.
final class ParallelSyncs: @unchecked Sendable {
    // `reports` and `next` are guarded by `condition`.
    private var reports: [SyncReport?]
    private var next = 0
    private let condition = Condition()

    init(sources: [Source], databases: [CacheDatabase], options: SyncEngine.Options, fetcher: any Fetching, environment: [String: String]) {
        reports = Array(repeating: nil, count: sources.count)
        for database in databases {
            // Handed to this one thread, which alone uses it and its connection from here on.
            nonisolated(unsafe) let engine = SyncEngine(database: database, fetcher: fetcher, environment: environment)
            detachThread { [self] in
                while let index = take() {
                    let report = engine.sync(sources[index], options: options)
                    condition.lock()
                    reports[index] = report
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
    }

    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard next < reports.count else { return nil }
        next += 1
        return next - 1
    }

    func wait(for index: Int) -> SyncReport {
        condition.lock()
        defer { condition.unlock() }
        while reports[index] == nil { condition.wait() }
        return reports[index]!
    }
}
