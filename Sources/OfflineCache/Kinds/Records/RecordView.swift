import FoundationEssentials

/// A generic source's view, `cached_NAME` (the source's name as it is: names hold only letters,
/// digits, `-`, `_` and `.`, and the view's name is quoted). SQLite compares names without
/// case, so a name another table or view has (`cached_Jokes` is the built-in `cached_jokes`)
/// gets `_json`, then `_json2`…, until it is free; the name chosen is kept in `record_views`.
/// Its columns: `key`, one per top-level scalar field seen in the records (`json_extract`, at
/// most `maxColumns`), then `seen_at`, `age_s`, `stale` and `pending`. A field whose name is taken (by
/// those five, or by another field differing only in case) or holds a quote, a backslash or
/// a control character gets no column; it stays in `record` in `cached_records`.
package struct RecordView {
    let db: Connection
    let source: String

    static let reserved: Set<String> = ["key", "seen_at", "age_s", "stale", "pending"]
    /// SQLite allows 2000 columns; a view of more fields than this is not one anybody reads.
    package static let maxColumns = 200
    /// Child views per source: records with ever new list fields must not fill the schema.
    package static let maxLists = 50

    /// The view's name, if the source has one yet.
    package static func name(_ db: Connection, source: String) throws -> String? {
        try db.query("SELECT view FROM record_views WHERE source = ?", [.text(source)]) { $0.text(0) }.first ?? nil
    }

    /// A view name for `base`, free in SQLite (which compares names without case) and among
    /// the names kept for views: `base`, else `base_json`, `base_json2`…
    func freeName(_ base: String) throws -> String {
        var candidate = base
        var attempt = 1
        while try db.scalarInt("""
            SELECT (SELECT count(*) FROM sqlite_schema WHERE lower(name) = lower(?1))
                 + (SELECT count(*) FROM record_views WHERE lower(view) = lower(?1))
                 + (SELECT count(*) FROM record_lists WHERE lower(view) = lower(?1))
            """, [.text(candidate)]) != 0 {
            candidate = base + (attempt == 1 ? "_json" : "_json\(attempt)")
            attempt += 1
        }
        return candidate
    }

    /// The source's view name, chosen and kept the first time.
    func assignedName() throws -> String {
        if let name = try Self.name(db, source: source) { return name }
        let name = try freeName("cached_" + source)
        try db.run("INSERT INTO record_views (source, view) VALUES (?, ?)", [.text(source), .text(name)])
        return name
    }

    /// The fields the view has columns for, in order.
    package static func columns(_ db: Connection, source: String) throws -> [String] {
        try db.query("SELECT name FROM record_fields WHERE source = ? ORDER BY position", [.text(source)]) { $0.text(0) ?? "" }
    }

    /// The same columns with where each one's value is in a record (a nested field's `__`
    /// column is not a top-level key).
    static func columnPaths(_ db: Connection, source: String) throws -> [(name: String, path: String)] {
        try db.query("SELECT name, path FROM record_fields WHERE source = ? ORDER BY position", [.text(source)]) {
            let name = $0.text(0) ?? ""
            return (name, $0.text(1) ?? jsonPath([name]))
        }
    }

    /// The child views of the source's top-level lists, in the order first seen.
    package static func childViews(_ db: Connection, source: String) throws -> [String] {
        try db.query("SELECT view FROM record_lists WHERE source = ? ORDER BY position", [.text(source)]) { $0.text(0) ?? "" }
    }

    /// Whether a field's name can be a column: printable, and nothing a JSON path or an SQL
    /// identifier would have to escape.
    static func canBeColumn(_ field: String) -> Bool {
        !field.isEmpty && field.unicodeScalars.allSatisfy { scalar in
            !Source.Header.isControl(scalar) && scalar != "\"" && scalar != "\\" && scalar != "'"
        }
    }

    /// Adds fields, nested fields and lists not seen before, and makes the views again where
    /// they changed (or are missing).
    func update(fields: [String], nested: NestedShapes = NestedShapes()) throws {
        var known = try db.query("SELECT name, path FROM record_fields WHERE source = ?", [.text(source)]) { ($0.text(0) ?? "", $0.text(1)) }
        var taken = Set((known.map(\.0) + Self.reserved).map { $0.lowercased() })
        var added = false
        // Top-level scalars, then nested objects' scalars as `owner__login`.
        let candidates = fields.map { (name: $0, path: [$0]) } + nested.objectFields.map { (name: $0.joined(separator: "__"), path: $0) }
        for field in candidates where known.count < Self.maxColumns && field.path.allSatisfy(Self.canBeColumn)
            && taken.insert(field.name.lowercased()).inserted {
            let path: SQLValue = field.path.count == 1 ? .null : .text(Self.jsonPath(field.path))
            try db.run("INSERT INTO record_fields (source, position, name, path) VALUES (?, ?, ?, ?)",
                       [.text(source), .int(known.count), .text(field.name), path])
            known.append((field.name, nil))
            added = true
        }
        let name = try assignedName()
        let exists = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name = ?", [.text(name)]) == 1
        if added || !exists { try create() }
        for list in nested.lists where Self.canBeColumn(list.name) { try updateList(list) }
    }

    /// A top-level list's child view: its name chosen the first time, its columns as seen.
    private func updateList(_ list: NestedShapes.List) throws {
        let key: [SQLValue] = [.text(source), .text(list.name)]
        var view = try db.query("SELECT view FROM record_lists WHERE source = ? AND list = ?", key) { $0.text(0) }.first ?? nil
        var changed = false
        if view == nil {
            guard try db.scalarInt("SELECT count(*) FROM record_lists WHERE source = ?", [.text(source)]) ?? 0 < Self.maxLists else { return }
            let parent = try assignedName()
            let chosen = try freeName(parent + "__" + list.name)
            let position = try db.scalarInt("SELECT count(*) FROM record_lists WHERE source = ?", [.text(source)]) ?? 0
            try db.run("INSERT INTO record_lists (source, list, position, view, scalars) VALUES (?, ?, ?, ?, 0)",
                       key + [.int(position), .text(chosen)])
            view = chosen
            changed = true
        }
        if list.hasScalars, try db.scalarInt("SELECT scalars FROM record_lists WHERE source = ? AND list = ?", key) == 0 {
            try db.run("UPDATE record_lists SET scalars = 1 WHERE source = ? AND list = ?", key)
            changed = true
        }
        var known = try db.query("SELECT name FROM record_list_fields WHERE source = ? AND list = ?", key) { $0.text(0) ?? "" }
        var taken = Set((known + ["key", "idx", "value"]).map { $0.lowercased() })
        for field in list.fields where known.count < Self.maxColumns && Self.canBeColumn(field) && taken.insert(field.lowercased()).inserted {
            try db.run("INSERT INTO record_list_fields (source, list, position, name) VALUES (?, ?, ?, ?)",
                       key + [.int(known.count), .text(field)])
            known.append(field)
            changed = true
        }
        let exists = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name = ?", [.text(view!)]) == 1
        if changed || !exists { try createList(list.name) }
    }

    /// Makes the source's view (again) from its name and fields as the cache keeps them: after
    /// a sync brought new fields, and after every migration (`DerivedViews`), with its child views.
    func create() throws {
        guard let (name, sql) = try definition() else { return }
        try db.execute("DROP VIEW IF EXISTS \(Self.quoted(name))")
        try db.execute(sql)
    }

    /// The source's view as `CREATE VIEW` (as `sqlite_schema` keeps it), if it has one yet.
    func definition() throws -> (name: String, sql: String)? {
        guard let name = try Self.name(db, source: source) else { return nil }
        // (A cache migrated part way, as tests do, has no paths yet: every field is top-level.)
        let hasPaths = try db.scalarInt("SELECT count(*) FROM pragma_table_info('record_fields') WHERE name = 'path'") == 1
        let columns = try db.query("SELECT name, \(hasPaths ? "path" : "NULL") FROM record_fields WHERE source = ? ORDER BY position",
                                   [.text(source)]) { row in
            let field = row.text(0) ?? ""
            return Self.extract(path: row.text(1) ?? Self.jsonPath([field])) + " AS " + Self.quoted(field)
        }
        return (name, """
            CREATE VIEW \(Self.quoted(name)) AS SELECT key, \((columns + ["seen_at", "age_s", "stale", "pending"]).joined(separator: ", "))
            FROM cached_records WHERE source = \(Self.literal(source))
            """)
    }

    /// Makes the child views of every list the source has (after a migration).
    func createLists() throws {
        for (name, sql) in try listDefinitions() {
            try db.execute("DROP VIEW IF EXISTS \(Self.quoted(name))")
            try db.execute(sql)
        }
    }

    /// The child views of every list the source has, as `CREATE VIEW`.
    func listDefinitions() throws -> [(name: String, sql: String)] {
        try db.query("SELECT list FROM record_lists WHERE source = ? ORDER BY position", [.text(source)], row: { $0.text(0) ?? "" })
            .compactMap { try listDefinition($0) }
    }

    /// `cached_NAME__FIELD`: a row per item of each record's list `list` (an array), with the
    /// record's key, the item's 0-based idx, `value` for items that are not objects, and a
    /// column per scalar field of the object items.
    private func createList(_ list: String) throws {
        guard let (name, sql) = try listDefinition(list) else { return }
        try db.execute("DROP VIEW IF EXISTS \(Self.quoted(name))")
        try db.execute(sql)
    }

    private func listDefinition(_ list: String) throws -> (name: String, sql: String)? {
        let key: [SQLValue] = [.text(source), .text(list)]
        guard let (name, scalars) = try db.query("SELECT view, scalars FROM record_lists WHERE source = ? AND list = ?", key, row: {
            ($0.text(0) ?? "", $0.int(1) != 0)
        }).first else { return nil }
        let fields = try db.query("SELECT name FROM record_list_fields WHERE source = ? AND list = ? ORDER BY position", key) { $0.text(0) ?? "" }
        var columns = ["r.key AS key", "j.key AS idx"]
        if scalars || fields.isEmpty { columns.append("CASE WHEN j.type NOT IN ('object', 'array') THEN j.value END AS value") }
        columns += fields.map { "CASE WHEN j.type = 'object' THEN \(Self.extract(path: Self.jsonPath([$0]), from: "j.value")) END AS \(Self.quoted($0))" }
        let path = Self.literal(Self.jsonPath([list]))
        return (name, """
            CREATE VIEW \(Self.quoted(name)) AS SELECT \(columns.joined(separator: ", "))
            FROM records r, json_each(r.record, \(path)) j
            WHERE r.source = \(Self.literal(source)) AND json_type(r.record, \(path)) = 'array'
            """)
    }

    /// Drops the views of a source being removed (before its rows go: the names are kept there).
    package static func drop(_ db: Connection, source: String) throws {
        for view in try childViews(db, source: source) { try db.execute("DROP VIEW IF EXISTS \(quoted(view))") }
        guard let name = try name(db, source: source) else { return }
        try db.execute("DROP VIEW IF EXISTS \(quoted(name))")
    }

    /// A field's place in a record, as SQLite's JSON functions take it: `$."owner"."login"`.
    static func jsonPath(_ keys: [String]) -> String { JSONPath(keys).sqlitePath }

    /// The SQL that reads the value at `path` (from `jsonPath`) from a record.
    package static func extract(path: String, from column: String = "record") -> String {
        "json_extract(\(column), \(literal(path)))"
    }

    /// The same value as people read it: a JSON boolean as `true` or `false` (where
    /// `json_extract`, and so the view, gives 1 or 0), anything else as `extract` gives it. For
    /// the rows `list` prints and an app reads, not for the view SQL clients filter on.
    /// (A searched CASE, not `CASE json_type(…) WHEN`: SQLite computes that form's operand even
    /// where an outer CASE never takes the branch, parsing a wide record once per column.)
    package static func displayExtract(path: String, from column: String = "record") -> String {
        let type = "json_type(\(column), \(literal(path)))"
        return "CASE WHEN \(type) = 'true' THEN 'true' WHEN \(type) = 'false' THEN 'false' ELSE \(extract(path: path, from: column)) END"
    }

    /// The SQL that reads the top-level `field` from a record.
    package static func extract(_ field: String) -> String { extract(path: jsonPath([field])) }

    /// Text as an SQL string literal.
    static func literal(_ text: String) -> String { "'" + text.replacingScalars { $0 == "'" ? "''" : nil } + "'" }

    package static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingScalars { $0 == "\"" ? "\"\"" : nil } + "\""
    }
}
