/// The cache's views: derived from the tables, so they hold no data of their own. Each
/// migration run drops them first and makes them again after (see `Migrator`): the built-in
/// views of every kind, then each json or csv source's `cached_NAME`.
enum DerivedViews {
    static var builtIn: [ViewDefinition] { RowStorage.allCases.flatMap(\.views) }

    static func drop(_ db: Connection) throws {
        for view in try perSource(db) + builtIn.map(\.name) {
            try db.execute("DROP VIEW IF EXISTS \(RecordView.quoted(view))")
        }
    }

    static func create(_ db: Connection) throws {
        let tables = Set(try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) ?? "" })
        for view in builtIn where tables.isSuperset(of: view.reads) {
            try db.execute("CREATE VIEW \(RecordView.quoted(view.name)) AS \(view.select)")
        }
        guard tables.contains("record_views") else { return }
        for source in try db.query("SELECT source FROM record_views ORDER BY source", row: { $0.text(0) ?? "" }) {
            try RecordView(db: db, source: source).create()
            if tables.contains("record_lists") { try RecordView(db: db, source: source).createLists() }
        }
    }

    /// The per-source views' names, where the cache has them.
    private static func perSource(_ db: Connection) throws -> [String] {
        let has = { (table: String) in try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(table)]) == 1 }
        guard try has("record_views") else { return [] }
        let children = try has("record_lists") ? try db.query("SELECT view FROM record_lists") { $0.text(0) ?? "" } : []
        return try children + db.query("SELECT view FROM record_views") { $0.text(0) ?? "" }
    }
}
