import FoundationEssentials

/// A generic source's view, `cached_NAME` (the source's name as it is: names hold only letters,
/// digits, `-`, `_` and `.`, and the view's name is quoted). SQLite compares names without
/// case, so a name another table or view has (`cached_Jokes` is the built-in `cached_jokes`)
/// gets `_json`, then `_json2`…, until it is free; the name chosen is kept in `record_views`.
/// Its columns: `key`, one per top-level scalar field seen in the records (`json_extract`, at
/// most `maxColumns`), then `seen_at`, `age_s` and `stale`. A field whose name is taken (by
/// those four, or by another field differing only in case) or holds a quote, a backslash or
/// a control character gets no column; it stays in `record` in `cached_records`.
package struct RecordView {
    let db: Connection
    let source: String

    static let reserved: Set<String> = ["key", "seen_at", "age_s", "stale"]
    /// SQLite allows 2000 columns; a view of more fields than this is not one anybody reads.
    package static let maxColumns = 200

    /// The view's name, if the source has one yet.
    package static func name(_ db: Connection, source: String) throws -> String? {
        try db.query("SELECT view FROM record_views WHERE source = ?", [.text(source)]) { $0.text(0) }.first ?? nil
    }

    /// The source's view name, chosen and kept the first time.
    func assignedName() throws -> String {
        if let name = try Self.name(db, source: source) { return name }
        let base = "cached_" + source
        var candidate = base
        var attempt = 1
        while try db.scalarInt("""
            SELECT (SELECT count(*) FROM sqlite_schema WHERE lower(name) = lower(?1))
                 + (SELECT count(*) FROM record_views WHERE lower(view) = lower(?1))
            """, [.text(candidate)]) != 0 {
            candidate = base + (attempt == 1 ? "_json" : "_json\(attempt)")
            attempt += 1
        }
        try db.run("INSERT INTO record_views (source, view) VALUES (?, ?)", [.text(source), .text(candidate)])
        return candidate
    }

    /// The fields the view has columns for, in order.
    package static func columns(_ db: Connection, source: String) throws -> [String] {
        try db.query("SELECT name FROM record_fields WHERE source = ? ORDER BY position", [.text(source)]) { $0.text(0) ?? "" }
    }

    /// Whether a field's name can be a column: printable, and nothing a JSON path or an SQL
    /// identifier would have to escape.
    static func canBeColumn(_ field: String) -> Bool {
        !field.isEmpty && field.unicodeScalars.allSatisfy { scalar in
            !Source.Header.isControl(scalar) && scalar != "\"" && scalar != "\\" && scalar != "'"
        }
    }

    /// Adds fields not seen before and makes the view again if there were any (or it is missing).
    func update(fields: [String]) throws {
        var known = try Self.columns(db, source: source)
        var taken = Set((known + Self.reserved).map { $0.lowercased() })
        var added = false
        for field in fields where known.count < Self.maxColumns && Self.canBeColumn(field) && taken.insert(field.lowercased()).inserted {
            try db.run("INSERT INTO record_fields (source, position, name) VALUES (?, ?, ?)",
                       [.text(source), .int(known.count), .text(field)])
            known.append(field)
            added = true
        }
        let name = try assignedName()
        let exists = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name = ?", [.text(name)]) == 1
        guard added || !exists else { return }
        try create()
    }

    /// Makes the source's view (again) from its name and fields as the cache keeps them: after
    /// a sync brought new fields, and after every migration (`DerivedViews`).
    func create() throws {
        guard let name = try Self.name(db, source: source) else { return }
        let view = Self.quoted(name)
        let columns = try Self.columns(db, source: source).map { field in Self.extract(field) + " AS " + Self.quoted(field) }
        try db.execute("DROP VIEW IF EXISTS \(view)")
        try db.execute("""
            CREATE VIEW \(view) AS SELECT key, \((columns + ["seen_at", "age_s", "stale"]).joined(separator: ", "))
            FROM cached_records WHERE source = '\(source.replacingScalars { $0 == "'" ? "''" : nil })'
            """)
    }

    /// Drops the view of a source being removed (before its row goes: the name is kept there).
    package static func drop(_ db: Connection, source: String) throws {
        guard let name = try name(db, source: source) else { return }
        try db.execute("DROP VIEW IF EXISTS \(quoted(name))")
    }

    /// The SQL that reads `field` from a record.
    package static func extract(_ field: String) -> String {
        "json_extract(record, '$.\"\(field.replacingScalars { $0 == "'" ? "''" : nil })\"')"
    }

    package static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingScalars { $0 == "\"" ? "\"\"" : nil } + "\""
    }
}
