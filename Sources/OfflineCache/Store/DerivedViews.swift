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
        }
    }

    /// The per-source views' names, where the cache has them.
    private static func perSource(_ db: Connection) throws -> [String] {
        guard try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'record_views'") == 1 else { return [] }
        return try db.query("SELECT view FROM record_views") { $0.text(0) ?? "" }
    }
}
