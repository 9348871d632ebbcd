import FoundationEssentials
import OfflineCache

/// `cache log NAME KEY`: one row's versions from the change log, newest first.
enum LogCommand {
    static func run(_ name: String, key: String, json: Bool, _ context: Context) throws -> Int32 {
        let database = try context.openForReading()
        let source = try SourceStore(database).named(name)
        let history = HistoryStore(database)
        let (versions, current) = try history.versions(of: source, key: key)
        guard !versions.isEmpty || current != nil else { throw CacheError.noSuchRow(key, source: name) }
        let console = context.console
        let since = try history.horizon(source: name)
        if json {
            console.out(JSONValue.lines(versions.map { version in
                .object([
                    ("run", .int(version.runID)), ("at", .string(version.at)), ("change", .string(version.change)),
                    ("row", .string(version.rowKind)),
                    ("fields", .array(fields(version).map { field in
                        .object([("field", .string(field.field)), ("before", field.before.map(JSONValue.raw) ?? .null),
                                 ("after", field.after.map(JSONValue.raw) ?? .null)])
                    })),
                    ("before", version.before.map(JSONValue.raw) ?? .null), ("after", version.after.map(JSONValue.raw) ?? .null),
                ])
            }))
            return ExitCode.success
        }
        let columns = console.terminalColumns
        let fit = { (line: String) in columns.map { DisplayWidth.fit(line, $0) } ?? line }
        for version in versions {
            console.out(fit("run \(version.runID) · \(InspectCommands.when(version.at)) · \(version.change)") + "\n")
            for field in fields(version) {
                let line: String
                switch (field.before, field.after) {
                case let (before?, after?): line = "\(field.field): \(before) → \(after)"
                case let (nil, after?): line = "\(field.field): \(after)"
                case let (before?, nil): line = "\(field.field): \(before) (gone)"
                case (nil, nil): continue
                }
                console.out(fit("  " + TerminalSafe.escapeControl(line)) + "\n")
            }
        }
        if versions.isEmpty, let current {
            // Cached, and every change that brought it here is older than the log's horizon.
            console.out("now · no change logged since \(since ?? "")\n")
            for field in RecordDiff.fields(current) {
                console.out(fit("  " + TerminalSafe.escapeControl("\(field.0): \(field.1)")) + "\n")
            }
            console.err("The change log of '\(name)' starts at \(since ?? ""): older runs were pruned, or its rows re-keyed.")
        }
        return ExitCode.success
    }

    /// The fields a version shows: those that changed in an update, every one otherwise.
    static func fields(_ version: RowVersion) -> [RecordDiff.FieldChange] {
        RecordDiff.changes(before: version.before ?? "{}", after: version.after ?? "{}")
    }
}
