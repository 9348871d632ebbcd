import OfflineCache

enum StatusCommand {
    static func run(json: Bool, _ context: Context) throws -> Int32 {
        let statuses = try CacheReader(context.openForReading()).status()
        let console = context.console
        if json {
            console.out(JSONValue.lines(statuses.map { status in
                .object([
                    ("source", .string(status.source.name)), ("kind", .string(status.source.kind.rawValue)),
                    ("url", .string(status.source.displayURL)), ("mode", .string(status.source.mode.rawValue)),
                    ("ttl_s", .int(status.source.ttlSeconds)), ("rows", .int(status.rows)),
                    ("stale_rows", .int(status.staleRows)), ("stale", .bool(status.stale)),
                    ("last_success_at", .optional(status.lastSuccessAt)), ("last_success_age_s", .optional(status.ageSeconds)),
                    ("last_attempt_at", .optional(status.lastAttemptAt)),
                    ("last_outcome", .optional(status.lastOutcome)),
                    ("last_error", .optional(status.lastError)),
                    ("next_attempt_at", .optional(status.nextAttemptAt)),
                ])
            }))
            return ExitCode.success
        }
        if statuses.isEmpty {
            console.err("No sources yet. Add one with 'cache sources add'.")
            return ExitCode.success
        }
        let table = TextTable(header: ["SOURCE", "KIND", "ROWS", "STALE", "LAST SUCCESS", "LAST OUTCOME", "TTL", "URL"])
        for status in statuses {
            table.add([
                status.source.name, status.source.kind.rawValue, String(status.rows), String(status.staleRows),
                status.ageSeconds.map { DurationText.age($0) + " ago" } ?? "never",
                status.lastOutcome ?? "-", DurationText.format(status.source.ttlSeconds), status.source.displayURL,
            ])
        }
        console.out(table.render())
        for status in statuses where status.lastOutcome == "failed" {
            console.out("\(status.source.name): last error: \(Context.escapeControl(status.lastError ?? "unknown"))\n")
        }
        return ExitCode.success
    }
}
