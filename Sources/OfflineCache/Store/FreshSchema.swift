import FoundationEssentials

/// The schema that every migration together leaves, for a brand-new file: its tables, indexes
/// and triggers made at once, in the order the migrations left them, and every migration
/// recorded as applied. Running the migrations one after another re-reads the growing schema at
/// each step, for a new file: the first command a user runs (and every test's new file) waited
/// on it (figures: docs/performance.md).
///
/// Derived from the migrations, never written by hand: `FreshSchemaTests` makes a file both
/// ways and compares every object and row, and writes `FreshSchema+Statements.swift` again when
/// asked (`CACHE_WRITE_FRESH_SCHEMA=1 swift test --filter FreshSchemaTests`). A binary whose
/// migrations have moved past `version` migrates a new file step by step until then.
package enum FreshSchema {
    /// Whether `db` holds nothing yet (at most the empty `schema_migrations` table).
    static func isEmpty(_ db: Connection) throws -> Bool {
        try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name <> 'schema_migrations'") == 0
    }

    /// Makes the schema in `db`, inside the caller's transaction, and records `migrations` as
    /// applied.
    static func make(_ db: Connection, recording migrations: [Migrator.Migration]) throws {
        try db.execute("DROP TABLE IF EXISTS schema_migrations")
        for statement in statements { try db.execute(statement) }
        let now = Timestamp.now()
        for migration in migrations {
            try db.run("INSERT INTO schema_migrations (id, file, applied_at) VALUES (?, ?, ?)",
                       [.int(migration.id), .text(migration.file), .text(now)])
        }
    }

    /// The schema's statements as SQLite keeps them (`sqlite_schema.sql`), in its order: every
    /// table, index and trigger but the views (`DerivedViews` makes those) and what SQLite makes
    /// itself (its own tables, automatic indexes, a virtual table's shadow tables); then the
    /// counters the migrations left in `sqlite_sequence`.
    package static func statements(of db: Connection) throws -> [String] {
        let virtual = try db.query("SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL TABLE%'") { $0.text(0) ?? "" }
        let hasSequence = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'") == 1
        let counters = hasSequence
            ? try db.query("SELECT 'INSERT INTO sqlite_sequence (name, seq) VALUES (' || quote(name) || ', ' || seq || ')' FROM sqlite_sequence ORDER BY name") { $0.text(0) ?? "" }
            : []
        return try db.query("""
            SELECT name, sql FROM sqlite_schema
            WHERE sql IS NOT NULL AND type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY rowid
            """) { ($0.text(0) ?? "", $0.text(1) ?? "") }
            .filter { name, _ in !virtual.contains { name.hasPrefix($0 + "_") } }
            .map(\.1) + counters
    }
}
