import FoundationEssentials
import Glibc
import OfflineCache

enum StatusCommand {
    /// Exit code of `status --max-age` when a source has not succeeded within its age.
    static let tooOld: Int32 = 1

    /// `status --max-lag DUR`: a follower whose primary's newest heartbeat is older than DUR (or
    /// that has none) fails, saying by how much; a primary passes.
    /// `file` names the file of several whose lag this is.
    static func checkLag(_ lag: ReplicaLag, maxLag: Int, json: Bool, file: String? = nil, _ console: Console) -> Int32 {
        let limit = DurationText.format(maxLag)
        let ok = lag.isWithin(maxLag)
        let line: String
        switch lag {
        case .primary:
            line = "ok: a primary (writable), behind nothing"
        case .unknown:
            line = "replica: no heartbeat from its primary yet (every 'cache sync' there stamps one), so its lag is unknown"
        case .behind(let seconds):
            let behind = DurationText.age(Int(seconds))
            line = ok ? "ok: \(behind) behind its primary, within \(limit)"
                : "replica: \(behind) behind its primary (its newest heartbeat), more than \(limit) by \(DurationText.age(Int(seconds) - maxLag))"
        case .ahead:
            line = "replica: " + lag.skew!
        }
        let named = (file.map { $0 + ": " } ?? "") + line
        // With --json, stdout is the JSON alone: the verdict on lag goes to stderr.
        if json { if !ok { console.err("cache: " + named) } } else { console.out(named + "\n") }
        return ok ? ExitCode.success : tooOld
    }

    static func run(_ options: Command.Status, _ context: Context) throws -> Int32 {
        // No database yet: no sources, the same as an empty one (nothing is created). Except for
        // a monitor's check, which must not pass on a path that holds no cache.
        let files = try context.openEveryFileIfPresent()
        let checking = options.maxAge != nil || options.maxLag != nil || options.maxPending != nil
        if files.isEmpty && checking { throw CacheError.noDatabase(path: context.databasePath) }
        var statuses: [(status: SourceStatus, file: Shards.File)] = []
        for file in files { statuses += try CacheReader(file.database).status().map { ($0, file) } }
        if !options.names.isEmpty {
            let known = Set(statuses.map(\.status.source.name))
            if let unknown = options.names.first(where: { !known.contains($0) }) { throw CacheError.noSuchSource(unknown) }
            statuses = statuses.filter { options.names.contains($0.status.source.name) }
        }
        let databases = context.databasePaths.joined(separator: ", ")
        if checking {
            var code = ExitCode.success
            if let maxAge = options.maxAge { code = check(statuses.map(\.status), maxAge: maxAge, json: options.json, database: databases, context.console) }
            if let maxLag = options.maxLag {
                // Each file against the bound: several files have a primary each.
                for file in files {
                    let lagCode = checkLag(file.lag, maxLag: maxLag, json: options.json, file: context.isSharded ? file.path : nil, context.console)
                    if code == ExitCode.success { code = lagCode }
                }
            }
            if let maxPending = options.maxPending {
                let pendingCode = checkPending(statuses.map(\.status), maxPending: maxPending, context.console)
                if code == ExitCode.success { code = pendingCode }
            }
            return code
        }
        let console = context.console
        if options.json {
            console.out(JSONValue.lines(statuses.map { $0.status.json(readOnly: context.readOnly, database: $0.file.path, replicaLag: $0.file.lag) }))
            return ExitCode.success
        }
        if statuses.isEmpty {
            console.err(context.readOnly ? "No sources yet in \(databases) (read-only: its primary adds them)."
                                         : "No sources yet in \(databases). Add one with 'cache sources add'.")
            return ExitCode.success
        }
        // The status table the docs show (its columns are checked against them); several files add the
        // file that holds each source.
        // KIND, MODE and TTL give way first on a narrow terminal: `sources list` shows them.
        let table = TextTable(header: ["SOURCE", "KIND", "MODE", "TTL", "ROWS", "STALE", "LAST SUCCESS", "LAST ATTEMPT", "OUTCOME", "NEXT TRY", "URL"]
                                  + (context.isSharded ? ["DB"] : []),
                              droppable: ["KIND", "MODE", "TTL"])
        for (status, file) in statuses {
            let ago = { (iso: String?) in iso.flatMap(Timestamp.parse).map { DurationText.age(max(0, Int(-$0.timeIntervalSinceNow))) + " ago" } }
            table.add([
                status.source.name, status.source.kind.rawValue, status.source.mode.rawValue,
                DurationText.format(status.source.ttlSeconds), String(status.rows), String(status.staleRows),
                status.ageSeconds.map { DurationText.age($0) + " ago" } ?? "never", ago(status.lastAttemptAt) ?? "never",
                status.lastOutcome ?? "-", status.nextAttemptAt.map(DurationText.until) ?? "-",
                status.source.displayURL,
            ] + (context.isSharded ? [file.path] : []))
        }
        let columns = console.terminalColumns
        console.out(table.render(columns: columns))
        // The errors after the table, each fitted to the terminal (`status --json` has them whole).
        let fit = { (line: String) in columns.map { DisplayWidth.fit(line, $0) } ?? line }
        for (status, _) in statuses {
            let error = TerminalSafe.escapeControl(status.lastError ?? "")
            switch status.lastOutcome {
            case "failed": console.out(fit("\(status.source.name): last error: \(error.isEmpty ? "unknown" : error)") + "\n")
            case "held": console.out(fit("\(status.source.name): \(error.isEmpty ? "held by the removal guard" : error)") + "\n")
            default: break
            }
            if let since = status.indexDamagedAt.flatMap(Timestamp.parse) {
                let age = DurationText.age(max(0, Int(-since.timeIntervalSinceNow)))
                console.out(fit("\(status.source.name): rows synced, but the search index is out of step since \(age) ago "
                    + "(\(TerminalSafe.escapeControl(status.indexDamage ?? "damaged"))); 'cache reindex \(status.source.name)' mends it") + "\n")
            }
            if let line = editsLine(status) { console.out(fit(line) + "\n") }
            if let incremental = status.source.layout?.incremental {
                let sweep = status.lastFullAt.flatMap(Timestamp.parse).map { "last full sync \(DurationText.age(max(0, Int(-$0.timeIntervalSinceNow)))) ago" }
                console.out(fit("\(status.source.name): incremental on \(incremental.cursorField.dotted), watermark "
                    + "\(TerminalSafe.escapeControl(status.watermark ?? "none yet")), \(sweep ?? "no full sync yet")") + "\n")
            }
        }
        // Which cache this is: on stderr, so the table stays the whole of stdout.
        console.err(fit((context.isSharded ? "databases: " : "database: ") + databases))
        if context.readOnly {
            // How far behind a replica can be: its newest sync ended this long ago (on the primary's
            // clock, read on this one), its lag at most that. Several files: each its own.
            for file in files {
                let newest = statuses.filter { $0.file.path == file.path }.compactMap(\.status.ageSeconds).min()
                let replica = (context.replica ?? LitestreamReplica.mark(of: file.path)).map { " (a Litestream replica: \($0) is beside it)" } ?? ""
                var behind = newest.map { "the newest sync here ended \(DurationText.age($0)) ago" } ?? "no sync here yet"
                if let seconds = file.lag.seconds {
                    behind += "; its primary's newest heartbeat is \(DurationText.age(Int(seconds))) old (its lag, at most)"
                }
                if let skew = file.lag.skew { behind += "; " + skew }
                console.err(fit("read-only\(context.isSharded ? " " + file.path : "")\(replica): " + behind))
            }
        }
        return ExitCode.success
    }

    /// A source's local edits not yet applied, in a sentence; nil when there are none.
    static func editsLine(_ status: SourceStatus) -> String? {
        let open = status.queuedEdits + status.conflictedEdits + status.rejectedEdits
        guard open > 0 else { return nil }
        let waited = status.oldestEditAt.flatMap(Timestamp.parse).map { ", the oldest made \(DurationText.age(max(0, Int(-$0.timeIntervalSinceNow)))) ago" } ?? ""
        return "\(status.source.name): local edits: \(status.queuedEdits) queued, \(status.conflictedEdits) in conflict, \(status.rejectedEdits) rejected or blocked\(waited); 'cache outbox \(status.source.name)' lists them"
    }

    /// `status --max-pending DUR`, for monitors: no local edit not yet applied may be older
    /// than DUR (a queue stuck behind an upstream that refuses, or a conflict nobody resolved).
    static func checkPending(_ statuses: [SourceStatus], maxPending: Int, _ console: Console) -> Int32 {
        let limit = DurationText.format(maxPending)
        let late = statuses.filter { status in
            status.oldestEditAt.flatMap(Timestamp.parse).map { -$0.timeIntervalSinceNow > Double(maxPending) } ?? false
        }
        guard !late.isEmpty else {
            console.out("ok: no local edit has waited more than \(limit)\n")
            return ExitCode.success
        }
        for status in late { console.err("cache: " + (editsLine(status) ?? status.source.name) + " (more than \(limit))") }
        return tooOld
    }

    /// `status --max-age DUR`, for monitors: every source (or those named) must have succeeded
    /// within DUR, or within its own `--alert-after`, and not be held by the removal guard (its
    /// rows grow older while it waits for a person). One quiet line when all pass; otherwise a
    /// line for each that does not, saying since when or what holds it, and exit 1.
    /// No source at all fails the check too: a monitor pointed at the wrong path or user would
    /// otherwise stay green forever.
    static func check(_ statuses: [SourceStatus], maxAge: Int, json: Bool, database: String, _ console: Console) -> Int32 {
        guard !statuses.isEmpty else {
            if json { console.out("[]\n") }
            console.err("cache: no sources in \(database): nothing is kept fresh, so nothing passes the check")
            return tooOld
        }
        let verdicts = HealthVerdict.of(statuses, maxAge: maxAge)
        let late = verdicts.filter { !$0.ok }
        if json {
            console.out(JSONValue.lines(verdicts.map(\.json)))
        } else if late.isEmpty {
            console.out("ok: \(verdicts.count) source\(verdicts.count == 1 ? "" : "s") synced within their max age\n")
        } else {
            for verdict in late {
                let name = verdict.status.source.name, limit = DurationText.format(verdict.limit)
                if verdict.status.isHeld {
                    let since = verdict.status.lastSuccessAt.map { " (its last success \(InspectCommands.when($0)))" } ?? ""
                    console.out("\(name): held by the removal guard\(since): \(TerminalSafe.escapeControl(verdict.status.lastError ?? "held"))\n")
                } else if let since = verdict.status.lastSuccessAt, let age = verdict.status.ageSeconds {
                    console.out("\(name): no successful sync for \(DurationText.age(age)) (since \(InspectCommands.when(since))), more than \(limit)"
                        + (verdict.status.lastError.map { "; last error: \(TerminalSafe.escapeControl($0))" } ?? "") + "\n")
                } else {
                    console.out("\(name): never synced successfully"
                        + (verdict.status.lastError.map { "; last error: \(TerminalSafe.escapeControl($0))" } ?? "") + "\n")
                }
            }
        }
        return late.isEmpty ? ExitCode.success : tooOld
    }
}
