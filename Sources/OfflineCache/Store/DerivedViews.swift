/// The cache's views: derived from the tables, so they hold no data of their own. Each
/// migration run drops them first and makes them again after (see `Migrator`), and so does an
/// open that finds one unlike its definition here: the built-in views of every kind, then each
/// json or csv source's `cached_NAME`.
enum DerivedViews {
    static var builtIn: [ViewDefinition] { RowStorage.allCases.flatMap(\.views) }

    static func drop(_ db: Connection) throws {
        var named: Set<String> = []
        for view in try perSource(db) + builtIn.map(\.name).filter({ named.insert($0).inserted }) {
            try db.execute("DROP VIEW IF EXISTS \(RecordView.quoted(view))")
        }
    }

    static func create(_ db: Connection) throws {
        for view in try definitions(db) { try db.execute(view.sql) }
    }

    /// Every view the cache should have, as `CREATE VIEW` statements (the text `sqlite_schema`
    /// keeps of each): the built-in ones whose tables exist, then each source's and its lists'.
    static func definitions(_ db: Connection) throws -> [(name: String, sql: String)] {
        let tables = Set(try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) ?? "" })
        // A view may be defined twice, the first for the newest schema: each is made once, the
        // first whose tables exist.
        var named: Set<String> = []
        var views = builtIn.filter { tables.isSuperset(of: $0.reads) && named.insert($0.name).inserted }.map {
            (name: $0.name, sql: "CREATE VIEW \(RecordView.quoted($0.name)) AS \($0.select)")
        }
        guard tables.contains("record_views") else { return views }
        for source in try db.query("SELECT source FROM record_views ORDER BY source", row: { $0.text(0) ?? "" }) {
            let view = RecordView(db: db, source: source)
            if let definition = try view.definition() { views.append(definition) }
            if tables.contains("record_lists") { views += try view.listDefinitions() }
        }
        return views
    }

    /// Whether every view is in the file as this binary defines it. A binary whose view
    /// definitions changed, with no migration pending, finds them otherwise and makes them
    /// again (`Migrator.migrate`): the definitions are their own version.
    static func areCurrent(_ db: Connection) throws -> Bool {
        let stored = Dictionary(try db.query("SELECT name, sql FROM sqlite_schema WHERE type = 'view'") { ($0.text(0) ?? "", $0.text(1) ?? "") },
                                uniquingKeysWith: { first, _ in first })
        return try definitions(db).allSatisfy { stored[$0.name] == $0.sql }
    }

    /// The per-source views' names, where the cache has them.
    private static func perSource(_ db: Connection) throws -> [String] {
        let has = { (table: String) in try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(table)]) == 1 }
        guard try has("record_views") else { return [] }
        let children = try has("record_lists") ? try db.query("SELECT view FROM record_lists") { $0.text(0) ?? "" } : []
        return try children + db.query("SELECT view FROM record_views") { $0.text(0) ?? "" }
    }
}
