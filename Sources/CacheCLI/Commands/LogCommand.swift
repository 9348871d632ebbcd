import FoundationEssentials
import OfflineCache

/// `cache log NAME KEY`: one row's versions from the change log, newest first.
enum LogCommand {
    static func run(_ name: String, key: String, json: Bool, _ context: Context) throws -> Int32 {
        let database = try context.openForReading(source: name)
        let source = try SourceStore(database).named(name)
        // The row's local edits, each with its life: edited, sent, applied (or conflict, …).
        let edits = source.kind.keepsRecords ? (try? OutboxStore(database).history(source: name, key: key)) ?? [] : []
        let shown: [RowVersion]
        do {
            shown = try HistoryStore(database).log(of: source, key: key)
        } catch CacheError.noSuchRow(_, _) where !edits.isEmpty {
            shown = []  // a record made here, not yet at the upstream
        }
        let console = context.console
        defer {
            if !json && !edits.isEmpty {
                console.out("local edits:\n")
                for event in edits {
                    console.out(TerminalSafe.escapeControl("  \(InspectCommands.when(event.at)) · edit \(event.edit.prefix(8)) · \(event.event)\(event.detail.map { ": " + $0 } ?? "")") + "\n")
                }
            }
        }
        let cut = try HistoryStore(database).cut(source: name)
        if json {
            console.out(JSONValue.lines(shown.map(\.json)))
        } else {
            let columns = console.terminalColumns
            let fit = { (line: String) in columns.map { DisplayWidth.fit(line, $0) } ?? line }
            for version in shown {
                let head = version.change == "current"
                    ? "now · no change logged since \(cut ?? "")"
                    : "run \(version.runID) · \(InspectCommands.when(version.at)) · \(version.change)"
                console.out(fit(head) + "\n")
                for field in version.fields {
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
        }
        if let cut {
            console.err("The change log of '\(name)' starts at \(cut): older runs were pruned, its rows re-keyed, or the cache is older than its history.")
        }
        return ExitCode.success
    }

}
