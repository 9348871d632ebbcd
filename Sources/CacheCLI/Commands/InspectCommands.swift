import CSQLite
import FoundationEssentials
import Glibc
import OfflineCache

/// Offline inspection: what the cache holds, where it came from, what changed.
enum InspectCommands {
    static func history(_ source: String?, limit: Int?, json: Bool, _ context: Context) throws -> Int32 {
        // Each file's runs (of several, the newest of them all; a run's number is its file's).
        let files = try context.openEveryFile().filter { file in source.map { name in file.sources.contains { $0.name == name } } ?? true }
        if let source, files.isEmpty { throw CacheError.noSuchSource(source) }
        var runs: [(run: SyncRunRecord, file: String)] = []
        for file in files {
            runs += try HistoryStore(file.database).runs(source: source, limit: limit).map { ($0, file.path) }
        }
        if files.count > 1 {
            runs.sort { ($0.run.finishedAt, $0.run.id) > ($1.run.finishedAt, $1.run.id) }
            if let limit { runs = Array(runs.prefix(limit)) }
        }
        let console = context.console
        if json {
            console.out(JSONValue.lines(runs.map { run, file in
                .object([
                    ("run", .int(run.id)), ("source", .string(run.source)), ("started_at", .string(run.startedAt)),
                    ("finished_at", .string(run.finishedAt)), ("outcome", .string(run.outcome)),
                    ("inserted", .int(run.counts.inserted)), ("updated", .int(run.counts.updated)),
                    ("deleted", .int(run.counts.deleted)), ("http_status", .optional(run.httpStatus)),
                    ("bytes", .optional(run.bytes)), ("duration_ms", .int(run.durationMs)), ("attempts", .int(run.attempts)),
                    ("error", .optional(run.error)), ("note", .optional(run.note)),
                ] + (context.isSharded ? [("database", .string(file))] : []))
            }))
            return ExitCode.success
        }
        if runs.isEmpty {
            console.err("No sync runs yet.")
            return ExitCode.success
        }
        // Several files: each run's file, since each numbers its own runs.
        let table = TextTable(header: ["RUN", "WHEN", "SOURCE", "OUTCOME", "INS", "UPD", "DEL", "HTTP", "BYTES", "TIME", "DETAIL"]
                                  + (context.isSharded ? ["DB"] : []),
                              droppable: ["BYTES", "TIME", "HTTP"])
        for (run, file) in runs {
            table.add([String(run.id), when(run.finishedAt), run.source, run.outcome, String(run.counts.inserted),
                       String(run.counts.updated), String(run.counts.deleted), run.httpStatus.map(String.init) ?? "-",
                       run.bytes.map(byteCount) ?? "-", "\(run.durationMs) ms",
                       TerminalSafe.escapeControl(run.error ?? run.note ?? "")] + (context.isSharded ? [file] : []))
        }
        console.out(table.render(columns: console.terminalColumns))
        return ExitCode.success
    }

    static func diff(_ source: String, _ selection: HistoryStore.Selection, json: Bool, _ context: Context) throws -> Int32 {
        let database = try context.openForReading(source: source)
        _ = try SourceStore(database).named(source)
        if case .run(let id) = selection, try !HistoryStore(database).hasRun(id, source: source) {
            throw CacheError.noSuchRun(id, source: source)
        }
        let changes = try HistoryStore(database).changes(source: source, selection)
        let console = context.console
        if json {
            console.out(JSONValue.lines(changes.map(\.json)))
            return ExitCode.success
        }
        if changes.isEmpty {
            console.err("No changes recorded for '\(source)' in that range.")
            return ExitCode.success
        }
        var run = -1
        let columns = console.terminalColumns
        let fit = { (line: String) in columns.map { DisplayWidth.fit(line, $0) } ?? line }
        for change in changes {
            if change.runID != run {
                run = change.runID
                console.out(fit("run \(run) · \(source) · \(when(change.at))") + "\n")
            }
            console.out(fit("  " + describe(change)) + "\n")
        }
        return ExitCode.success
    }

    /// One change as `diff --json` and `sync --plan --json` show it.
    /// One change as a line: `+ Lyft  Mon, Nov 30  - 12.00`, `~ Whole Foods  Sat, Nov 28  amount 84.10 → 90.25`.
    static func describe(_ change: ChangeRecord) -> String {
        if let rows = change.rows {
            let noun = change.rowKind
            return "+ \(rows) \(noun)\(rows == 1 ? "" : "s") loaded into an empty cache"
        }
        let before = object(change.before), after = object(change.after)
        let mark = change.change == "inserted" ? "+" : change.change == "updated" ? "~" : "-"
        let row = after ?? before ?? [:]
        switch change.rowKind {
        case "transaction":
            let vendor = TerminalSafe.escapeControl(row["vendor"]?.string ?? "?")
            let date = ListRendering.shortDate(row["date"]?.string ?? "")
            if change.change == "updated", let before, let after {
                var fields: [String] = []
                if let old = before["amount"]?.double, let new = after["amount"]?.double, old != new {
                    fields.append("amount \(ListRendering.money(old)) → \(ListRendering.money(new))")
                }
                if let old = before["type"]?.int, let new = after["type"]?.int, old != new {
                    fields.append("type \(old) → \(new)")
                }
                return "\(mark) \(vendor)  \(date)  \(fields.joined(separator: ", "))"
            }
            let amount = (row["amount"]?.double).map { ListRendering.money($0) } ?? "?"
            return "\(mark) \(vendor)  \(date)  \((row["type"]?.int) == 0 ? "+" : "-") \(amount)"
        case "record":
            let key = TerminalSafe.escapeControl(change.rowID)
            guard change.change == "updated", let before = change.before, let after = change.after else {
                return "\(mark) \(key)"
            }
            let fields = RecordDiff.changes(before: before, after: after).map { field in
                "\(field.field) \(field.before ?? "(none)") → \(field.after ?? "(none)")"
            }
            return "\(mark) \(key)  \(TerminalSafe.escapeControl(fields.joined(separator: ", ")))"
        case "joke":
            let setup = TerminalSafe.escapeControl((row["setup"]?.string ?? "").replacingScalars { $0 == "\n" ? " " : nil })
            if change.change == "updated", let before, let after {
                let fields = ["type", "setup", "punchline"].filter { before[$0]?.string != after[$0]?.string }
                return "\(mark) #\(change.rowID)  \(setup)  (\(fields.joined(separator: ", ")) changed)"
            }
            return "\(mark) #\(change.rowID)  \(setup)"
        default:
            let name = TerminalSafe.escapeControl(row["name"]?.string ?? "?")
            if let before, let after, change.change == "updated" {
                let old = (before["balance"]?.double).map(ListRendering.money) ?? "?"
                let new = (after["balance"]?.double).map(ListRendering.money) ?? "?"
                return "\(mark) account \(name)  balance \(old) → \(new)"
            }
            return "\(mark) account \(name)  balance \((row["balance"]?.double).map(ListRendering.money) ?? "?")"
        }
    }

    private static func object(_ json: String?) -> [String: Field]? {
        json.flatMap { try? JSONDecoder().decode([String: Field].self, from: Data($0.utf8)) }
    }

    /// A field of a row the change log recorded: text, a number, or anything else.
    enum Field: Decodable {
        case text(String), number(Double), other

        init(from decoder: Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let text = try? value.decode(String.self) { self = .text(text) }
            else if let number = try? value.decode(Double.self) { self = .number(number) }
            else { self = .other }
        }

        var string: String? { if case .text(let text) = self { text } else { nil } }
        var double: Double? { if case .number(let number) = self { number } else { nil } }
        var int: Int? { double.flatMap { Int(exactly: $0) } }
    }

    static func backup(to path: String, _ context: Context) throws -> Int32 {
        let report = try Backup.write(context.openForReading(), to: path)
        let tenths = (report.bytes * 10 + (1 << 19)) >> 20
        context.console.err("Backed up \(report.sources) source\(report.sources == 1 ? "" : "s") to \(TerminalSafe.escapeControl(report.path)) (\(tenths / 10).\(tenths % 10) MiB, schema version \(report.schemaVersion)); its check passed.")
        return ExitCode.success
    }

    static func prune(keepSeconds: Int, _ context: Context) throws -> Int32 {
        let (runs, changes) = try HistoryStore(context.open(create: false)).prune(olderThan: keepSeconds)
        context.console.err("Pruned \(runs) sync run\(runs == 1 ? "" : "s") and \(changes) change log entr\(changes == 1 ? "y" : "ies") older than \(DurationText.format(keepSeconds)).")
        return ExitCode.success
    }

    static func sql(_ query: String, format: Command.Format, _ context: Context) throws -> Int32 {
        // Several files: each checked first (and a source in two refused), then attached to the first.
        if context.isSharded { _ = try Shards(paths: context.databasePaths) }
        let runner = try ReadOnlyQuery(paths: context.databasePaths, creatingNothing: context.readOnly)
        let console = context.console
        var names: [String] = []
        var table: TextTable?
        var first = true
        do {
            try runner.run(query, columns: { columns in
                names = columns
                switch format {
                case .json: console.out("[")
                case .csv: console.out(CSVText.row(columns))
                case .human: table = TextTable(header: columns)
                }
            }, row: { row in
                let values = (0..<names.count).map(row.value)
                switch format {
                case .json:
                    if !first { console.out(JSONValue.arraySeparator) }
                    console.out(JSONValue.object(zip(names, values.map(JSONValue.init)).map { ($0, $1) }).text)
                case .csv:
                    console.out(CSVText.row(values.map(text)))
                case .human:
                    table?.add(values.map { TerminalSafe.escapeControl(text($0)) })
                }
                first = false
            })
        } catch let error as DatabaseError where error.primaryCode == SQLITE_ERROR {
            throw UsageError(message: "The query failed: \(error.message).", command: "sql")
        }
        switch format {
        case .json: console.out("]\n")
        case .csv: break
        case .human: console.out(table?.render() ?? "")
        }
        return ExitCode.success
    }

    private static func text(_ value: SQLValue) -> String {
        switch value {
        case .null: ""
        case .int(let v): String(v)
        case .double(let v): JSONValue.number(v)
        case .text(let v): v
        }
    }

    static func check(_ context: Context) throws -> Int32 {
        let report = try Integrity.check(path: context.databasePath, readOnly: context.readOnly)
        let console = context.console
        console.out("integrity: \(report.problems.isEmpty ? "ok" : "\(report.problems.count) problem(s)")\n")
        console.out("foreign keys: \(report.foreignKeyProblems.isEmpty ? "ok" : "\(report.foreignKeyProblems.count) problem(s)")\n")
        let searchProblems = report.searchProblems ?? []
        console.out("search index: \(report.searchProblems == nil ? "none yet (a cache from before search)" : searchProblems.isEmpty ? "ok" : "\(searchProblems.count) problem(s)")\n")
        console.out("schema version: \(report.schemaVersion) (this cache knows \(report.knownVersion))\n")
        for problem in (report.problems + report.foreignKeyProblems + searchProblems).prefix(20) {
            console.err("cache: check: \(TerminalSafe.escapeControl(problem))")
        }
        if !searchProblems.isEmpty && report.problems.isEmpty && report.foreignKeyProblems.isEmpty {
            console.err("cache: check: the search index is out of step with the rows; 'cache reindex' (of every source) builds it again")
            return ExitCode.ioError
        }
        if report.schemaVersion > report.knownVersion {
            console.err("cache: check: the database is from a newer cache")
            return ExitCode.configuration
        }
        if !report.isHealthy {
            console.err("cache: check: the database is damaged")
            return ExitCode.ioError
        }
        return ExitCode.success
    }

    static func export(_ name: String, format: Command.ExportFormat, _ context: Context) throws -> Int32 {
        let database = try context.openForReading(source: name)
        let source = try SourceStore(database).named(name)
        let console = context.console
        var writer: RowBytes?
        if format == .json { console.out("[") }
        let asRecords = source.kind.keepsRecords && format != .csv
        try CacheReader(database).forEachRow(of: source, asRecords: asRecords) { columns, row in
            if writer == nil {
                writer = RowBytes.listRow(columns, asRecords: asRecords)
                if format == .csv { console.out(CSVText.row(columns)) }
            } else if format == .json {
                console.out(JSONValue.arraySeparator)
            }
            let rowWriter = writer!
            switch format {
            case .json: console.out { rowWriter.json(row, into: &$0) }
            case .ndjson: console.out { rowWriter.json(row, into: &$0); $0.append(0x0A) }
            case .csv: console.out { rowWriter.csv(row, into: &$0) }
            }
        }
        if format == .json { console.out("]\n") }
        return ExitCode.success
    }

    /// A stored UTC time as people read it: local time (`TZ` honoured), to the second.
    static func when(_ timestamp: String) -> String {
        guard let date = Timestamp.parse(timestamp) else { return timestamp }
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(cFormat: "%04d-%02d-%02d %02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    private static func byteCount(_ bytes: Int) -> String {
        switch bytes {
        case ..<1024: "\(bytes) B"
        case ..<(1 << 20): String(cFormat: "%.1f KB", Double(bytes) / 1024)
        default: String(cFormat: "%.1f MB", Double(bytes) / Double(1 << 20))
        }
    }
}
