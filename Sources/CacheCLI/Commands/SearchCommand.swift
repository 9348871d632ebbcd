import FoundationEssentials
import OfflineCache

/// `cache search NAME QUERY`: the cached rows whose text matches, best first, offline; and
/// `cache reindex`, which builds the index again.
enum SearchCommand {
    static func run(_ options: Command.Search, _ context: Context) throws -> Int32 {
        let database = try context.openForReading(source: options.name)
        let source = try SourceStore(database).named(options.name)
        guard source.searchable else {
            throw UsageError(message: "Search is off for '\(source.name)'; 'cache sources set \(source.name) --search on' indexes its rows.", command: "search")
        }
        // The first search of a source builds its index (its syncs keep it from then on).
        let console = context.console
        let started = ContinuousClock.now
        let building = console.stderrIsTerminal && !context.readOnly && (try? SearchIndex(database).isBuilt(source.name)) == false
        if building { console.err("Building the search index of '\(source.name)' (its first search)…") }
        if try SearchIndex.buildForFirstSearch(source, path: database.path, readOnly: context.readOnly, reading: database), building {
            let tenths = (ContinuousClock.now - started) / .milliseconds(100)
            console.err("Built in \(Int(tenths) / 10).\(Int(tenths) % 10) s; syncs keep it in step from now on.")
        }
        let reader = CacheReader(database)
        let hits: [SearchHit]
        do {
            hits = try reader.search(source, query: options.query, limit: options.limit)
        } catch let error as SearchQueryError {
            throw UsageError(message: "The query '\(options.query)' is not one FTS5 can read (\(error.message)); quote words holding punctuation as \"phrases\".",
                             command: "search")
        }
        // Each hit's rows as `list --json` shows them: one row, or a vendor's transactions.
        let asRecords = source.kind.keepsRecords
        // The key as text (an id as its digits), and the row as JSON only when JSON is printed.
        var found: [(key: String, numeric: Bool, row: String, hit: SearchHit, field: String?)] = []
        var writer: RowBytes?
        for hit in hits where found.count < options.limit {
            try reader.forEachRow(of: source, document: hit.document, limit: options.limit - found.count, asRecords: asRecords) { columns, row in
                var json = ""
                if options.json {
                    let rowWriter = writer ?? RowBytes.listRow(columns, asRecords: asRecords)
                    writer = rowWriter
                    var bytes: [UInt8] = []
                    rowWriter.json(row, into: &bytes)
                    json = String(decoding: bytes, as: UTF8.self)
                }
                let numeric = if case .int = row.value(0) { true } else { false }
                let texts = columns.indices.dropFirst().compactMap { index -> (name: String, text: String)? in
                    guard case .text(let text) = row.value(index), !["seen_at", "key"].contains(columns[index]) else { return nil }
                    return (columns[index], text)
                }
                found.append((row.text(0) ?? "", numeric, json, hit, CacheReader.matchedField(of: source, snippet: hit.snippet, fields: texts)))
            }
        }
        let keyName = source.kind.keepsRecords ? "key" : "id"
        if options.json {
            console.out(JSONValue.lines(found.map { found in
                .object([(keyName, found.numeric ? .raw(found.key) : .string(found.key)), ("row", .raw(found.row)),
                         ("snippet", .string(found.hit.snippet)), ("field", .optional(found.field)), ("rank", .double(found.hit.rank))])
            }))
            return ExitCode.success
        }
        if found.isEmpty {
            console.err("Nothing in '\(source.name)' matches \(options.query).")
            return ExitCode.success
        }
        let table = TextTable(header: [keyName.uppercased(), "FIELD", "MATCH"])
        for found in found {
            table.add([TerminalSafe.escapeControl(found.key), TerminalSafe.escapeControl(found.field ?? "-"),
                       TerminalSafe.escapeControl(found.hit.snippet.replacingScalars { $0 == "\n" ? " " : nil })])
        }
        console.out(table.render(columns: console.terminalColumns))
        return ExitCode.success
    }

    static func reindex(_ names: [String], _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let store = SourceStore(database)
        let sources = names.isEmpty ? try store.all() : try names.map { try store.named($0) }
        // FTS5's own index is shared by every source: damaged, it is rebuilt whatever was named.
        switch try SearchIndex(database).reindex(sources, everySource: names.isEmpty, path: context.databasePath) {
        case .rebuilt: break
        case .remade:
            context.console.err("The search index was damaged past FTS5's own rebuild: made again, and every source with search on indexed anew.")
        case .remadeBesideDamagedPages:
            context.console.err("The search index's pages were damaged past dropping: it was made again beside them, and every source with search on indexed anew. The old pages stay in the file, unused, until it is rebuilt ('sqlite3 FILE VACUUM' on a file no Litestream follows, or a restore from a replica); 'cache check' counts them until then.")
        }
        for source in sources {
            context.console.err(source.searchable ? "Indexed '\(source.name)' for search." : "Search is off for '\(source.name)': it keeps no index.")
        }
        return ExitCode.success
    }
}
