import Foundation
import Testing
@testable import OfflineCache

@Suite(.computing) struct MigrationTests {
    static let migrationsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations")

    @Test func theCarriedCopyEqualsTheFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.migrationsFolder.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(Migrator.embedded.map(\.file) == files, "run Scripts/embed-migrations")
        for (file, carried) in zip(files, Migrator.embedded) {
            let text = try String(contentsOf: Self.migrationsFolder.appendingPathComponent(file), encoding: .utf8)
            #expect(carried.sql == text, "\(file) differs from the carried copy: run Scripts/embed-migrations")
        }
    }

    @Test func migrationsApplyInOrderEachRecordedOnce() throws {
        let db = try Connection(path: ":memory:")
        let migrator = Migrator(migrations: [
            .init(id: 2, file: "0002_b.sql", sql: "ALTER TABLE t ADD COLUMN b TEXT"),
            .init(id: 1, file: "0001_a.sql", sql: "CREATE TABLE t (a TEXT)"),
        ])
        try migrator.migrate(db)
        try migrator.migrate(db)  // a second run applies nothing
        #expect(try db.query("SELECT id FROM schema_migrations ORDER BY id") { $0.int(0) } == [1, 2])
        #expect(try db.query("SELECT name FROM pragma_table_info('t')") { $0.text(0) } == ["a", "b"])
    }

    @Test func aFailedMigrationLeavesNoTraceAndRethrowsItsError() throws {
        let db = try Connection(path: ":memory:")
        let migrator = Migrator(migrations: [
            .init(id: 1, file: "0001_a.sql", sql: "CREATE TABLE t (a TEXT); CREATE TABLE t (again TEXT);"),
        ])
        #expect {
            try migrator.migrate(db)
        } throws: { error in
            (error as? DatabaseError)?.message == "0001_a.sql: table t already exists"
        }
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 't'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM schema_migrations") == 0)
    }

    @Test func aNewerDatabaseIsRefused() throws {
        let db = try Connection(path: ":memory:")
        try Migrator().migrate(db)
        try db.execute("INSERT INTO schema_migrations VALUES (99, '0099_x.sql', 'now')")
        #expect(throws: Migrator.NewerSchemaError.self) { try Migrator().migrate(db) }
    }

    @Test func clusteringTheTransactionsKeepsEveryCachedRow() throws {
        let db = try Connection(path: ":memory:")
        try Migrator(migrations: Migrator.carried.filter { $0.id <= 4 }).migrate(db)
        try db.execute("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('bank', 'account', 'file:///a', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO accounts VALUES ('bank', 'Checking', 10.5, '2026-11-30T00:00:00.000Z');
            INSERT INTO transactions VALUES ('00000000000000a1', 'bank', '2026-11-28T08:15:14Z', 'Uber', 0, 1, 12.5, '2026-11-30T00:00:00.000Z');
            INSERT INTO transactions VALUES ('00000000000000a2', 'bank', '2026-11-28T08:15:14Z', 'Uber', 1, 1, 7.25, '2026-11-30T00:00:00.000Z');
            INSERT INTO transactions VALUES ('00000000000000a3', 'bank', '2026-11-29T09:00:00Z', 'Payroll', 0, 0, 2000, '2026-11-30T00:00:00.000Z');
            """)
        let columns = "id, source, date, vendor, ordinal, type, amount, seen_at"
        let before = try db.query("SELECT \(columns) FROM transactions ORDER BY id") { row in (0..<8).map { row.value($0) } }

        try Migrator().migrate(db)

        #expect(try db.query("SELECT \(columns) FROM transactions ORDER BY id") { row in (0..<8).map { row.value($0) } } == before)
        #expect(try db.scalarInt("SELECT count(*) FROM pragma_index_list('transactions')") == 1)  // the primary key alone
        #expect(try db.query("SELECT id FROM cached_transactions ORDER BY date DESC, vendor, ordinal") { $0.text(0) ?? "" }
                == ["00000000000000a3", "00000000000000a1", "00000000000000a2"])
        #expect(try db.scalarText("PRAGMA foreign_key_check") == nil)
    }

    /// Migration 0010 rebuilds `sources`, `changes` and `loads` for the json kind (SQLite cannot
    /// alter a CHECK): every cached row and all history are kept; with foreign keys on inside a
    /// migration, dropping the old table would cascade and delete them all.
    @Test func theJSONKindMigrationRebuildsSourcesAndKeepsEveryRow() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("PRAGMA foreign_keys=ON")
        let before10 = Array(Migrator.carried.prefix { $0.id < 10 })
        try Migrator(migrations: before10).migrate(db)
        try db.execute("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('bank', 'account', 'file:///a', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO sync_state (source) VALUES ('bank');
            INSERT INTO accounts VALUES ('bank', 'Checking', 10.5, '2026-11-30T00:00:00.000Z');
            INSERT INTO transactions VALUES ('00000000000000a1', 'bank', '2026-11-28T08:15:14Z', 'Uber', 0, 1, 12.5, '2026-11-30T00:00:00.000Z');
            INSERT INTO sync_runs (source, started_at, finished_at, outcome) VALUES ('bank', '2026-11-30T00:00:00.000Z', '2026-11-30T00:00:01.000Z', 'updated');
            INSERT INTO changes (run_id, source, row_kind, row_id, change) VALUES (1, 'bank', 'transaction', '00000000000000a1', 'inserted');
            INSERT INTO loads (run_id, source, row_kind, rows) VALUES (1, 'bank', 'transaction', 1);
            """)
        func counts() throws -> [Int64] {
            try ["sources", "sync_state", "accounts", "transactions", "sync_runs", "changes", "loads"].map {
                try db.scalarInt("SELECT count(*) FROM \($0)") ?? -1
            }
        }
        let before = try counts()
        #expect(before == [1, 1, 1, 1, 1, 1, 1])
        let identity = try db.scalarText("SELECT rowid || ':' || created_at FROM sources")

        try Migrator().migrate(db)

        #expect(try counts() == before)
        #expect(try db.scalarText("SELECT rowid || ':' || created_at FROM sources") == identity)  // a sync in flight still knows it
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)  // on again after the migration
        #expect(try db.scalarText("PRAGMA foreign_key_check") == nil)
        // A json source is accepted now.
        try db.execute("INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('j', 'json', 'file:///j', 'replace', 60, 'x')")
        try db.execute("DELETE FROM sources WHERE name = 'j'")
        #expect(try db.scalarInt("SELECT count(*) FROM cached_transactions") == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM cached_accounts") == 1)
        // The rebuilt tables still cascade: removing the source takes everything with it.
        try db.execute("DELETE FROM sources")
        #expect(try counts() == [0, 0, 0, 0, 0, 0, 0])
    }

    @Test func aMigrationLeavingOrphansIsRolledBack() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("PRAGMA foreign_keys=ON")
        try Migrator().migrate(db)
        try db.execute("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('bank', 'account', 'file:///a', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO accounts VALUES ('bank', 'Checking', 10.5, '2026-11-30T00:00:00.000Z');
            """)
        let orphaning = Migrator.Migration(id: 999, file: "0999_orphans.sql", sql: "DELETE FROM sources")
        #expect {
            try Migrator(migrations: Migrator.carried + [orphaning]).migrate(db)
        } throws: { error in
            (error as? DatabaseError)?.message.contains("0999_orphans.sql leaves rows without their parent") == true
        }
        #expect(try db.scalarInt("SELECT count(*) FROM sources") == 1)
        #expect(try db.scalarInt("SELECT max(id) FROM schema_migrations") == Int64(Migrator().latestVersion))
    }

    @Test func runIdsNeverRepeatAfterTheRebuildAndHistoryIsKept() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("PRAGMA foreign_keys=ON")
        try Migrator(migrations: Migrator.carried.filter { $0.id <= 8 }).migrate(db)
        try db.execute("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('bank', 'account', 'file:///a', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO sync_runs (id, source, started_at, finished_at, outcome, note, attempts) VALUES (7, 'bank', 'a', 'b', 'updated', 'n', 2);
            INSERT INTO changes (run_id, source, row_kind, row_id, change) VALUES (7, 'bank', 'transaction', 'x', 'inserted');
            """)
        try Migrator().migrate(db)
        #expect(try db.scalarInt("SELECT count(*) FROM changes WHERE run_id = 7") == 1)
        #expect(try db.scalarText("SELECT note || attempts FROM sync_runs WHERE id = 7") == "n2")
        try db.execute("DELETE FROM sync_runs")
        try db.execute("INSERT INTO sync_runs (source, started_at, finished_at, outcome) VALUES ('bank', 'a', 'b', 'failed')")
        #expect(db.lastInsertRowID == 8)  // not 1: ids are never handed out again
        #expect(try db.scalarText("PRAGMA foreign_key_check") == nil)
    }

    /// A search index built before migration 25: its text moves beside its documents, and its
    /// entries stay as they were (not built again); FTS5's check against the moved text passes,
    /// a search finds what it found, and a document taken out takes its entries with it.
    @Test func theSearchTextMovesBesideItsDocumentsAndTheIndexIsKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/cache.sqlite3"
        let db = try Connection(path: path)
        try Migrator(migrations: Migrator.carried.filter { $0.id <= 24 }).migrate(db)
        // A jokes source indexed as the build before migration 25 did: the text in FTS5's own table.
        try db.execute("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('jokes', 'jokes', 'file:///j', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO jokes VALUES ('jokes', 1, 'general', 'Why?', 'Because.', '2026-11-30T00:00:00.000Z'),
                                     ('jokes', 2, 'general', 'Café?', 'Closed.', '2026-11-30T00:00:00.000Z');
            INSERT INTO search_built VALUES ('jokes', '2026-11-30T00:00:00.000Z');
            INSERT INTO search_docs (id, source, doc) VALUES (7, 'jokes', '1'), (8, 'jokes', '2');
            INSERT INTO search_index (rowid, text) VALUES (7, 'Why? Because.'), (8, 'Café? Closed.');
            INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('items', 'json', 'file:///i', 'replace', 60, '2026-11-30T00:00:00.000Z');
            INSERT INTO records VALUES ('items', '1', '{"id":1,"name":"alpha"}', '2026-11-30T00:00:00.000Z'),
                                       ('items', '2', '{"id":2,"n":5}', '2026-11-30T00:00:00.000Z');
            INSERT INTO search_built VALUES ('items', '2026-11-30T00:00:00.000Z');
            INSERT INTO search_docs (id, source, doc) VALUES (9, 'items', '1');
            INSERT INTO search_index (rowid, text) VALUES (9, 'alpha');
            """)
        let entries = "SELECT group_concat(id || ':' || hex(block), ',') FROM (SELECT id, block FROM search_index_data ORDER BY id)"
        let before = try db.scalarText(entries)
        // `check` reads a file as it is, before any migration: this one is healthy.
        #expect(try Integrity.check(path: path).searchProblems == [])

        let database = try CacheDatabase(path: path, access: .write)
        let migrated = database.connection
        #expect(try Migrator.appliedVersion(migrated) == Migrator().latestVersion)
        #expect(try migrated.scalarText(entries) == before)
        #expect(try migrated.query("SELECT id || '=' || text FROM search_docs ORDER BY id") { $0.text(0) ?? "" } == ["7=Why? Because.", "8=Café? Closed.", "9=alpha"])
        #expect(try migrated.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'search_index_content'") == 0)
        #expect(try migrated.scalarText("SELECT sql FROM sqlite_schema WHERE name = 'search_index'") == SearchIndex.definition)
        try migrated.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        #expect(try SearchIndex(database).problems("jokes", .jokes) == [])
        // A record without strings has no document, before and after.
        #expect(try SearchIndex(database).problems("items", .json) == [])
        #expect(try Integrity.check(path: path).searchProblems == [])
        let hits = try CacheReader(database).search(try SourceStore(database).named("jokes"), query: "cafe", limit: 5)
        #expect(hits.map(\.document) == ["2"] && hits.first?.snippet == "[Café]? Closed.", "\(hits)")

        try migrated.execute("DELETE FROM search_docs WHERE doc = '2'")
        #expect(try migrated.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH 'closed'") == 0)
        try migrated.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
    }
}
