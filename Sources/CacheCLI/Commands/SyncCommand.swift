import OfflineCache

enum SyncCommand {
    static func run(_ options: Command.Sync, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let store = SourceStore(database)
        let sources = try options.names.isEmpty ? store.all() : options.names.map { name throws(CacheError) in
            try store.named(name)
        }
        let console = context.console
        if sources.isEmpty && !options.quiet {
            console.err("No sources to sync. Add one with 'cache sources add'.")
        }
        let engine = SyncEngine(database: database, environment: context.environment)
        var engineOptions = SyncEngine.Options(onlyIfStale: options.ifStale)
        if let timeout = options.timeout { engineOptions.timeout = timeout }

        var exitCode = ExitCode.success
        var reports: [SyncReport] = []
        for source in sources {
            var sourceOptions = engineOptions
            // Progress only where a person watches: a terminal, and not --quiet.
            if console.stderrIsTerminal && !options.quiet {
                sourceOptions.progress = ProgressLine(source: source.name).update
            }
            let report = engine.sync(source, options: sourceOptions)
            reports.append(report)
            if let failure = report.failure {
                console.err("cache: sync \(source.name): \(Context.escapeControl(report.errorText ?? failure.description))")
                if exitCode == ExitCode.success {
                    exitCode = ExitCode.of(failure, hadCachedRows: report.hadCachedRows)
                }
            } else if !options.json && !options.quiet {
                console.out(line(for: report) + "\n")
            }
        }
        if options.json && !(options.quiet && exitCode == ExitCode.success) {
            console.out(JSONValue.lines(reports.map(json)))
        }
        return exitCode
    }

    static func line(for report: SyncReport) -> String {
        switch report.outcome {
        case .updated:
            let c = report.counts
            return "\(report.source): updated (\(c.inserted) inserted, \(c.updated) updated, \(c.deleted) deleted) in \(report.durationMs) ms"
        case .unchanged: return "\(report.source): unchanged in \(report.durationMs) ms"
        case .skipped: return "\(report.source): skipped (\(report.note ?? "not due"))"
        case .failed: return "\(report.source): failed: \(report.errorText ?? "unknown error")"
        }
    }

    static func json(_ report: SyncReport) -> JSONValue {
        .object([
            ("source", .string(report.source)), ("outcome", .string(report.outcome.rawValue)),
            ("inserted", .int(report.counts.inserted)), ("updated", .int(report.counts.updated)),
            ("deleted", .int(report.counts.deleted)), ("http_status", .optional(report.httpStatus)),
            ("error", .optional(report.errorText)), ("duration_ms", .int(report.durationMs)),
            ("attempts", .int(report.attempts)), ("note", .optional(report.note)),
        ])
    }
}
