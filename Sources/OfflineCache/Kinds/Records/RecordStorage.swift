import FoundationEssentials

/// The storage json and csv sources share: one `records` table of canonical JSON by key, and a
/// view per source (`RecordView`) with a column per field.
struct RecordStorage: StorageDefinition {
    var rowTable: String { "records" }
    var cachedTables: [String] { ["records"] }
    var rowNoun: String { "records" }
    var keepsRecords: Bool { true }

    /// Every record with its source, staleness and whether a local edit of it is pending, as the
    /// cache shows it: a record with edits as they left it (`record_overlay`), and records made
    /// here and not yet at the upstream after them, for any SQLite client (the per-source views
    /// cached_NAME add a column per field). A removal that applied hides the row until the next
    /// sync. `cached_records_synced` leaves the made records out:
    /// it reads in key order off the index, where the union sorts (see `shownView`). A file
    /// migrated part way (as tests do) has no overlay: its views say nothing is pending.
    var views: [ViewDefinition] {
        let synced = """
            SELECT source, key, record, \(ViewDefinition.staleness), pending
            FROM (SELECT r.source, r.key, coalesce(o.record, r.record) AS record, s.ttl_s,
                         max(r.seen_at, coalesce(st.confirmed_at, '')) AS seen_at, coalesce(o.pending, 0) AS pending
                  FROM records r
                  JOIN sources s ON s.name = r.source
                  LEFT JOIN sync_state st ON st.source = r.source
                  LEFT JOIN record_overlay o ON o.source = r.source AND o.key = r.key
                  WHERE o.key IS NULL OR o.removed = 0 OR o.pending = 1)
            """
        let created = """
            SELECT source, key, record, \(ViewDefinition.staleness), pending
            FROM (SELECT o.source, o.key, o.record, s.ttl_s, o.made_at AS seen_at, o.pending
                  FROM record_overlay o
                  JOIN sources s ON s.name = o.source
                  WHERE (o.removed = 0 OR o.pending = 1)
                    AND NOT EXISTS (SELECT 1 FROM records r WHERE r.source = o.source AND r.key = o.key))
            """
        let unedited = """
            SELECT source, key, record, \(ViewDefinition.staleness), 0 AS pending
            FROM (SELECT r.source, r.key, r.record, s.ttl_s,
                         max(r.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                  FROM records r
                  JOIN sources s ON s.name = r.source
                  LEFT JOIN sync_state st ON st.source = r.source)
            """
        let tables = ["records", "sources", "sync_state"]
        return [
            ViewDefinition("cached_records_synced", reads: tables + ["record_overlay"], synced),
            ViewDefinition("cached_records_created", reads: tables + ["record_overlay"], created),
            ViewDefinition("cached_records", reads: tables + ["record_overlay"],
                           "SELECT * FROM cached_records_synced UNION ALL SELECT * FROM cached_records_created"),
            ViewDefinition("cached_records_synced", reads: tables, unedited),
            ViewDefinition("cached_records", reads: tables, unedited),
        ]
    }

    /// The view a read of `source`'s rows goes through: `cached_records`, or, while the source has
    /// no record made here and not yet at the upstream (nearly always), `cached_records_synced`,
    /// which pages in key order off the index instead of sorting every row for one page.
    static func shownView(_ db: Connection, _ selection: RowSelection) throws -> String {
        guard selection.asOf == nil else { return "cached_records" }
        // One query on every read (a server's too). A file migrated part way, as tests leave
        // one, has no overlay: the query fails, and its views show nothing pending anyway.
        let made = try? db.scalarInt("""
            SELECT EXISTS (SELECT 1 FROM record_overlay o WHERE o.source = ?1
                           AND NOT EXISTS (SELECT 1 FROM records r WHERE r.source = o.source AND r.key = o.key))
            """, [.text(selection.source)])
        return made == 0 ? "cached_records_synced" : "cached_records"
    }

    /// Gives every cached record of a json or csv source its key under `key`, read from the record
    /// itself, so the next sync matches records instead of replacing them all. A record without
    /// the new key, or two with the same one, refuse the change: nothing is rewritten.
    func rekey(_ db: Connection, source name: String, to key: [JSONPath]) throws {
        let layout = RecordLayout(key: key)
        var rekeyed: [(key: String, record: String, seenAt: String)] = []
        var seen: Set<String> = []
        for (old, record, seenAt) in try db.query("SELECT key, record, seen_at FROM records WHERE source = ?", [.text(name)], row: {
            ($0.text(0) ?? "", $0.text(1) ?? "{}", $0.text(2) ?? "")
        }) {
            let page: RecordPage
            do { page = try RecordDecoder.decode(Data(record.utf8), layout: layout) } catch {
                throw SourceRules.Problem(message: "the cached record \(old) has no \(layout.keyDescription) to be its key; the key stays as it was")
            }
            let new = page.records.key(0)
            guard seen.insert(new).inserted else {
                throw SourceRules.Problem(message: "two cached records have the key \(new) under \(layout.keyDescription); the key stays as it was")
            }
            rekeyed.append((new, record, seenAt))
        }
        try db.run("DELETE FROM records WHERE source = ?", [.text(name)])
        for record in rekeyed {
            try db.run("INSERT INTO records (source, key, record, seen_at) VALUES (?, ?, ?, ?)",
                       [.text(name), .text(record.key), .text(record.record), .text(record.seenAt)])
        }
    }

    /// After a sync lands (in its transaction): the watermark is the largest cursor field
    /// cached (SQLite's order: numbers, then text), and a full sync is the last full one (which
    /// also applies a held full sweep: `sweep_held` is cleared).
    ///
    /// The watermark is kept as the record holds it, never through a REAL: a number as its JSON
    /// text (`1700000000.123456` keeps its 16 digits, an integer above 2^63 every digit), a
    /// string unquoted. Numbers that tie as REALs (integers past 2^53) are told apart by their
    /// text's length, then its bytes: right for non-negative integers; for fractions or negatives
    /// that tie, the smaller may be kept, which only asks for a little more again.
    func recordWatermark(_ db: Connection, _ incremental: RecordLayout.Incremental, source: String, fullSync: Bool, at now: String) throws {
        try db.run("""
            UPDATE sync_state SET
                watermark = coalesce((SELECT CASE WHEN typeof(value) = 'text' THEN value ELSE raw END
                                      FROM (SELECT json_extract(record, ?1) AS value, record -> ?1 AS raw
                                            FROM records WHERE source = ?2)
                                      WHERE value IS NOT NULL ORDER BY value DESC, length(raw) DESC, raw DESC LIMIT 1),
                                     watermark),
                last_full_at = CASE WHEN ?3 THEN ?4 ELSE last_full_at END,
                sweep_held = CASE WHEN ?3 THEN 0 ELSE sweep_held END
            WHERE source = ?2
            """, [.text(incremental.cursorField.sqlitePath), .text(source), .int(fullSync ? 1 : 0), .text(now)])
    }

    /// A record this long or longer has its fields read in one pass (`wideFields`) instead of
    /// one `json_extract` per column: each of those parses the whole record again, and SQLite
    /// keeps every parse until the row is done, so memory grows with columns times size (figures:
    /// docs/performance.md).
    static let wideRecord = 1 << 16

    /// The records by key, with the fields the source's view has columns for.
    func rows(_ db: Connection, _ selection: RowSelection) throws -> CachedRows {
        let source = selection.source
        let (with, picked) = select("*", from: try Self.shownView(db, selection), selection, orderBy: "key")
        let paths = try RecordView.columnPaths(db, source: source)
        let columns = paths.map(\.name)
        // The length in bytes, once per row (length() of text counts characters, every time).
        let extracts = paths.map { ", CASE WHEN NOT wide THEN \(RecordView.displayExtract(path: $0.path)) END" }.joined()
        var rows = try db.query("""
            \(with)SELECT key, record, seen_at, age_s, stale, pending, wide\(extracts)
            FROM (SELECT *, length(CAST(record AS BLOB)) >= \(Self.wideRecord) AS wide FROM (\(picked)))
            ORDER BY key
            """, [.text(source), .int(Int64(selection.limit ?? -1))]) { row in
            CachedRecord(key: row.text(0) ?? "", fields: row.int(6) != 0 ? [] : columns.indices.map { row.text(7 + $0) },
                         record: row.text(1) ?? "{}", seenAt: row.text(2) ?? "", ageSeconds: row.int(3), stale: row.int(4) != 0,
                         pending: row.int(5) != 0)
        }
        // A wide record came back without its fields: read them in one pass.
        for index in rows.indices where rows[index].fields.count != columns.count {
            rows[index].fields = try Self.wideFields(db, source: source, record: rows[index].record, columns: paths)
        }
        return .records(columns: columns, rows)
    }

    /// A wide record's fields for `columns`, from one `json_each` over it (a nested column's from
    /// its own `displayExtract`): the same values, as the same text, that `displayExtract` gives.
    static func wideFields(_ db: Connection, source: String, record: String, columns: [(name: String, path: String)]) throws -> [String?] {
        let topLevel = columns.enumerated().filter { $0.element.path == RecordView.jsonPath([$0.element.name]) }
        let position = Dictionary(topLevel.map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
        var fields = [String?](repeating: nil, count: columns.count)
        for (index, column) in columns.enumerated() where position[column.name] != index {
            fields[index] = try db.scalarText("SELECT \(RecordView.displayExtract(path: column.path, from: "?1"))", [.text(record)])
        }
        let scan = try db.cachedStatement("""
            SELECT j.key, CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE j.value END
            FROM json_each(?2) j WHERE j.key IN (SELECT name FROM record_fields WHERE source = ?1)
            """)
        defer { scan.reset() }
        try scan.bind([.text(source), .text(record)])
        while try scan.step() {
            if let name = scan.text(0), let index = position[name], fields[index] == nil { fields[index] = scan.text(1) }
        }
        return fields
    }

    func rowsQuery(_ db: Connection, _ selection: RowSelection, asRecords: Bool) throws -> String {
        // The view's columns: the key, each field, seen_at, age_s, stale, pending (see RecordView).
        let fields = asRecords ? ["record"] : try RecordView.columnPaths(db, source: selection.source).map {
            RecordView.extract(path: $0.path) + " AS " + RecordView.quoted($0.name)
        }
        let (with, body) = select((["key"] + fields + ["seen_at", "age_s", "stale", "pending"]).joined(separator: ", "),
                                  from: try Self.shownView(db, selection), selection, orderBy: "key")
        return with + body
    }

    var loggedAs: (kind: String, key: String, fields: String) { ("record", "key", "record") }

    func past(_ rows: PastRows) -> String {
        """
        \(rows.view("cached_records", columns: "source, key, record", kind: loggedAs.kind, table: "records", key: "r.key",
                    current: "r.source, r.key, r.record", restored: "c.source, c.row_id AS key, c.before AS record",
                    trailing: ", 0 AS pending"))
        """
    }

    var pageKey: String { "key" }

    /// A record's string values, wherever they are in it, by its key (NULL when it has none).
    var search: SearchDocuments {
        SearchDocuments(changedDocument: "c.row_id", column: "key", indexed: ["record"]) { only in
            """
            SELECT key AS doc, cache_strings(record) AS text
            FROM records WHERE source = ?1\(only ? " AND key IN (SELECT value FROM json_each(?2))" : "")
            """
        }
    }

    /// A field's column is read from the record, as the source's view reads it.
    func filterColumn(_ db: Connection, source: String, _ column: String) throws -> String? {
        if RecordView.reserved.contains(column) { return RecordView.quoted(column) }
        return try RecordView.columnPaths(db, source: source).first { $0.name == column }.map { RecordView.extract(path: $0.path) }
    }

    func viewColumns(_ db: Connection, source: String) throws -> [String] {
        ["key"] + (try RecordView.columns(db, source: source)) + ["seen_at", "age_s", "stale", "pending"]
    }
}

/// A generic source's cached record: its key, the record's top-level fields the source's view
/// has columns for (as text; nil where the record lacks one), and the record itself.
///
/// ```swift
/// if case .records(let columns, let records) = try cache.rows(of: "repos", limit: 10) {
///     for record in records { print(record.key, zip(columns, record.fields).map { "\($0)=\($1 ?? "-")" }) }
/// }
/// ```
package struct CachedRecord: Sendable, Equatable {
    /// The record's key (the `key` fields' values; several joined with `,`).
    package var key: String
    /// The view's field columns' values, in `CachedRows.records`'s column order (nil where the record has none).
    package var fields: [String?]
    /// Canonical JSON.
    package var record: String
    /// When upstream last confirmed it (ISO 8601, UTC).
    package var seenAt: String
    /// How long ago that was, when it was read.
    package var ageSeconds: Int
    /// Upstream has not confirmed it within the TTL.
    package var stale: Bool
    /// A local edit of it (`cache edit`) is waiting to reach the upstream: `record` shows the
    /// edit; a record being removed shows its last version until the removal applies.
    package var pending = false
}
