import FoundationEssentials
import Glibc

/// Applies the numbered migrations in order, each in its own immediate transaction that also
/// records its id, and refuses a database that a newer version of cache has migrated further.
public struct Migrator {
    public struct Migration: Sendable {
        /// The number the file name starts with: `0001_initial.sql` is 1.
        public let id: Int
        public let file: String
        public let sql: String
    }

    /// A database whose schema is newer than any migration this binary carries.
    public struct NewerSchemaError: Error, CustomStringConvertible, Sendable {
        public let databaseVersion: Int
        public let knownVersion: Int
        public var description: String {
            "the database has schema version \(databaseVersion), newer than this cache knows (\(knownVersion)); use a newer cache"
        }
    }

    public let migrations: [Migration]

    public init(migrations: [Migration] = Migrator.carried) {
        self.migrations = migrations.sorted { $0.id < $1.id }
    }

    /// The migrations compiled into this binary.
    public static var carried: [Migration] {
        embedded.map { entry in
            let digits = entry.file.prefix { $0.isNumber }
            return Migration(id: Int(digits) ?? 0, file: entry.file, sql: entry.sql)
        }
    }

    public var latestVersion: Int { migrations.last?.id ?? 0 }

    /// The highest migration id recorded in the database, 0 for a new one.
    public static func appliedVersion(_ db: Connection) throws -> Int {
        let exists = try db.scalarInt(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'") ?? 0
        guard exists > 0 else { return 0 }
        return Int(try db.scalarInt("SELECT max(id) FROM schema_migrations") ?? 0)
    }

    /// Throws `NewerSchemaError` before anything is written when the database is from a newer cache.
    public func checkNotNewer(_ db: Connection) throws {
        let applied = try Self.appliedVersion(db)
        if applied > latestVersion {
            throw NewerSchemaError(databaseVersion: applied, knownVersion: latestVersion)
        }
    }

    /// Applies every migration the database lacks.
    public func migrate(_ db: Connection) throws {
        try checkNotNewer(db)
        try db.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                id INTEGER PRIMARY KEY, file TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT
            """)
        let applied = try Self.appliedVersion(db)
        for migration in migrations where migration.id > applied {
            // Foreign keys off around each migration, as SQLite's table-rebuild procedure asks:
            // with them on, dropping `sources` to rebuild it would cascade-delete every cached
            // row and all history. The pragma cannot change inside a transaction, so it is set
            // outside it, and the keys are checked before the commit instead.
            let enforced = try db.scalarInt("PRAGMA foreign_keys") == 1
            if enforced { try db.execute("PRAGMA foreign_keys=OFF") }
            defer { if enforced { try? db.execute("PRAGMA foreign_keys=ON") } }
            try db.inTransaction {
                // Another process may have applied it while this one waited for the lock.
                let done = try db.scalarInt("SELECT count(*) FROM schema_migrations WHERE id = ?",
                                            [.int(migration.id)]) ?? 0
                guard done == 0 else { return }
                try db.execute(migration.sql)
                let violations = try db.query("PRAGMA foreign_key_check") { "\($0.text(0) ?? "?") row \($0.int(1))" }
                guard violations.isEmpty else {
                    throw DatabaseError(extendedCode: 787,  // SQLITE_CONSTRAINT_FOREIGNKEY
                                        message: "\(migration.file) leaves rows without their parent: \(violations.prefix(3).joined(separator: ", "))")
                }
                try db.run("INSERT INTO schema_migrations (id, file, applied_at) VALUES (?, ?, ?)",
                           [.int(migration.id), .text(migration.file), .text(Timestamp.now())])
            }
        }
    }
}
