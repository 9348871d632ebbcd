import FoundationEssentials

/// Brings a database to this binary's schema: the numbered migrations it lacks, in order, in
/// one immediate transaction that also records their ids; a database that a newer version of
/// cache has migrated further is refused.
///
/// A migration is SQL (a file under `Migrations/`) or Swift code (`Migrator.swiftMigrations`),
/// and changes tables only. Views are derived objects (`DerivedViews`): dropped before the
/// migrations run and made again from their one definition after, so a migration that rebuilds
/// a table never trips over a view that reads it, and no view is ever copied into a migration.
/// A change to a view's definition needs no migration: an open that finds a view unlike its
/// definition makes them all again (`DerivedViews.areCurrent`).
///
/// Shipped migrations are frozen (`FrozenMigrationsTests`): their code calls nothing that can
/// change. Derived data that live code makes (the search index's documents) is asked for by a
/// `.rebuild` migration and made after every migration has run, against the schema as it is.
package struct Migrator {
    package struct Migration: Sendable {
        /// The number the file name starts with: `0001_initial.sql` is 1.
        package let id: Int
        /// The file, or for Swift code its name in the same form (`0011_kinds_without_checks.swift`).
        package let file: String
        package let change: Change

        package enum Change: Sendable {
            case sql(String)
            case swift(@Sendable (Connection) throws -> Void)
            /// Derived data made again once the schema is this binary's, by the code of today.
            case rebuild(Derived)
        }

        /// What a `.rebuild` migration makes again.
        package enum Derived: Sendable, Hashable {
            /// The search documents of every source with `--search`.
            case searchIndex
        }

        package init(id: Int, file: String, sql: String) {
            self.init(id: id, file: file, change: .sql(sql))
        }

        package init(id: Int, file: String, change: Change) {
            self.id = id
            self.file = file
            self.change = change
        }

        func apply(_ db: Connection) throws {
            switch change {
            case .sql(let sql): try db.execute(sql)
            case .swift(let code): try code(db)
            case .rebuild: break  // after every migration: see `Migrator.migrate`
            }
        }
    }

    /// A database whose schema is newer than any migration this binary carries.
    package struct NewerSchemaError: Error, CustomStringConvertible, Sendable {
        package let databaseVersion: Int
        package let knownVersion: Int
        package var description: String {
            CacheError.newerSchema(databaseVersion: databaseVersion, knownVersion: knownVersion).description
        }
    }

    package let migrations: [Migration]
    /// Whether a brand-new file is given `FreshSchema` at once: only for the carried migrations,
    /// which that schema is the outcome of.
    private let startsFresh: Bool

    /// This binary's migrations.
    package init() {
        migrations = Migrator.carried
        startsFresh = true
    }

    /// Other migrations (a test's): every one of them run, a new file included.
    package init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.id < $1.id }
        startsFresh = false
    }

    /// The migrations compiled into this binary, the SQL files and the Swift ones, in order.
    package static var carried: [Migration] {
        (embedded.map { entry in
            let digits = entry.file.prefix { $0.isNumber }
            return Migration(id: Int(digits) ?? 0, file: entry.file, sql: entry.sql)
        } + swiftMigrations).sorted { $0.id < $1.id }
    }

    package var latestVersion: Int { migrations.last?.id ?? 0 }

    /// The highest migration id recorded in the database, 0 for a new one.
    package static func appliedVersion(_ db: Connection) throws -> Int {
        let exists = try db.scalarInt(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'") ?? 0
        guard exists > 0 else { return 0 }
        return Int(try db.scalarInt("SELECT max(id) FROM schema_migrations") ?? 0)
    }

    /// Throws `NewerSchemaError` before anything is written when the database is from a newer cache.
    package func checkNotNewer(_ db: Connection) throws {
        let applied = try Self.appliedVersion(db)
        if applied > latestVersion {
            throw NewerSchemaError(databaseVersion: applied, knownVersion: latestVersion)
        }
    }

    /// Applies every migration the database lacks, then makes the views again.
    package func migrate(_ db: Connection) throws {
        try checkNotNewer(db)
        try db.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                id INTEGER PRIMARY KEY, file TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT
            """)
        guard try Self.appliedVersion(db) < latestVersion else {
            // No migration pending, but this binary may define a view otherwise.
            if try !DerivedViews.areCurrent(db) {
                try db.inTransaction {
                    try DerivedViews.drop(db)
                    try DerivedViews.create(db)
                }
            }
            return
        }
        // Foreign keys off around the migrations, as SQLite's table-rebuild procedure asks: with
        // them on, dropping `sources` to rebuild it would cascade-delete every cached row and all
        // history. The keys are checked before the commit instead.
        try db.withoutForeignKeys {
            // A rename leaves views alone (neither checked nor rewritten): a view somebody else
            // added to the file, reading a table a migration rebuilds, reads the new one after.
            try db.execute("PRAGMA legacy_alter_table=ON")
            defer { try? db.execute("PRAGMA legacy_alter_table=OFF") }
            try db.inTransaction {
                // Another process may have applied them while this one waited for the lock.
                let applied = try Self.appliedVersion(db)
                let pending = migrations.filter { $0.id > applied }
                guard !pending.isEmpty else { return }
                if applied == 0, startsFresh, FreshSchema.version == latestVersion, try FreshSchema.isEmpty(db) {
                    try FreshSchema.make(db, recording: migrations)
                    try DerivedViews.create(db)
                    return
                }
                try DerivedViews.drop(db)
                for migration in pending {
                    do {
                        try migration.apply(db)
                    } catch let error as DatabaseError {
                        throw DatabaseError(extendedCode: error.extendedCode, message: "\(migration.file): \(error.message)", sql: error.sql)
                    }
                    let violations = try db.query("PRAGMA foreign_key_check") { "\($0.text(0) ?? "?") row \($0.int(1))" }
                    guard violations.isEmpty else {
                        throw DatabaseError(extendedCode: 787,  // SQLITE_CONSTRAINT_FOREIGNKEY
                                            message: "\(migration.file) leaves rows without their parent: \(violations.prefix(3).joined(separator: ", "))")
                    }
                    try db.run("INSERT INTO schema_migrations (id, file, applied_at) VALUES (?, ?, ?)",
                               [.int(migration.id), .text(migration.file), .text(Timestamp.now())])
                }
                try DerivedViews.create(db)
                for derived in Set(pending.compactMap(\.change.derived)) {
                    switch derived {
                    case .searchIndex: try SearchIndex(db: db).indexAll()
                    }
                }
            }
        }
    }
}

extension Migrator.Migration.Change {
    var derived: Migrator.Migration.Derived? {
        if case .rebuild(let derived) = self { derived } else { nil }
    }
}
