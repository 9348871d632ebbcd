import Foundation
import Testing
@testable import OfflineCache

/// A cache made by the last release (Scripts/make-upgrade-fixture, kept as SQL) upgrades to this
/// binary's schema with every row and every view, its json sources' views included; and so it
/// would through a later migration that rebuilds `sources` the way 0010 did.
@Suite(.computing) struct UpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/cache-at-schema-10.sql")

    /// The fixture loaded into a new file, plus a view of the user's own that reads `sources`.
    static func releaseCache() throws -> (folder: String, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("upgrade-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/cache.sqlite3"
        let db = try Connection(path: path)
        try db.execute(try String(contentsOf: fixture, encoding: .utf8))
        try db.execute("CREATE VIEW my_sources AS SELECT name, kind FROM sources WHERE kind != 'jokes'")
        return (folder, path)
    }

    /// Everything a cache holds, as text: each table's rows and each view's rows (without the
    /// ages, which move with the clock), by name. With `like`, only the columns it has (a
    /// migration may add columns).
    static func contents(_ db: Connection, like earlier: [String: [String]]? = nil) throws -> [String: [String]] {
        var contents: [String: [String]] = [:]
        let objects = try db.query("""
            SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
              AND name != 'schema_migrations' ORDER BY name
            """) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        for (type, name) in objects {
            let columns = try db.query("SELECT name FROM pragma_table_info(?)", [.text(name)]) { $0.text(0) ?? "" }
                .filter { $0 != "age_s" && (earlier?["columns \(name)"]?.contains($0) ?? true) }
            contents["columns \(name)"] = columns
            let list = columns.map { "quote(\(RecordView.quoted($0)))" }.joined(separator: " || '|' || ")
            let rows = try db.query("SELECT \(list) FROM \(RecordView.quoted(name))") { $0.text(0) ?? "NULL" }.sorted()
            contents["\(type) \(name)"] = rows
        }
        return contents
    }

    @Test func aCacheMadeByTheLastReleaseKeepsEveryRowAndView() throws {
        let (folder, path) = try Self.releaseCache()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let release = try Connection(path: path)
        let before = try Self.contents(release)
        let sequence = try #require(try release.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'sync_runs'"))
        // What the fixture holds, so this test cannot pass on an empty cache.
        #expect(before["view cached_items"]?.count == 120)
        #expect(before["view cached_Jokes_json"]?.count == 120)
        #expect(before["view cached_transactions"]?.count == 6)
        #expect(before["view cached_jokes"]?.count == 10)
        #expect(before["table sync_runs"]?.contains { $0.contains("'held: would remove 4 of 6") } == true)
        #expect(before["table changes"]?.isEmpty == false)

        let database = try CacheDatabase(path: path, access: .write)
        let db = database.connection
        #expect(try Migrator.appliedVersion(db) == Migrator().latestVersion)
        #expect(try Migrator.appliedVersion(db) > 10)
        let after = try Self.contents(db, like: before)
        // Every table and view kept, and only the tables later migrations add are new.
        let added = ["run_totals", "record_lists", "record_list_fields", "history_horizon", "unconfirmations", "search_docs", "search_index", "heartbeat", "search_built",
                     "outbox", "outbox_log", "record_overlay", "record_etags", "edit_requests", "overlay_versions"]
            + ["data", "idx", "docsize", "config"].map { "search_index_" + $0 }  // FTS5's own tables (its text is in search_docs)
        // (and the views local edits read: the rows the upstream has, and the records made here).
        #expect(Set(after.keys).subtracting(before.keys) == Set(added.flatMap { ["columns \($0)", "table \($0)"] })
                    .union(["cached_records_synced", "cached_records_created"].flatMap { ["columns \($0)", "view \($0)"] }))
        #expect(Set(before.keys).isSubset(of: after.keys))
        // Migration 13 counts the runs the history holds, by outcome (held ones as held).
        let totals = try db.query("SELECT outcome || '=' || runs FROM run_totals WHERE source = 'bank' ORDER BY outcome") { $0.text(0) ?? "" }
        let counted = try db.query("SELECT outcome || '=' || count(*) FROM sync_runs WHERE source = 'bank' GROUP BY outcome ORDER BY outcome") { $0.text(0) ?? "" }
        #expect(totals == counted && totals.contains { $0.hasPrefix("held=") }, "\(totals) \(counted)")
        // Migration 21 moves each source's settings into one document beside the columns SQL
        // reads; the sources read back as they were.
        #expect(after["columns sources"] == ["name", "kind", "url", "mode", "ttl_s", "created_at"])
        #expect(try db.query("SELECT name FROM pragma_table_info('sources')") { $0.text(0) ?? "" }
                == ["name", "kind", "url", "mode", "ttl_s", "search", "created_at", "settings"])
        let sources = Dictionary(uniqueKeysWithValues: try SourceStore(database).all().map { ($0.name, $0) })
        #expect(sources.keys.sorted() == ["Jokes", "bank", "down", "items", "jokes"])
        #expect(sources["bank"]?.maxDelete == .rows(2) && sources["bank"]?.mode == .replace && sources["bank"]?.ttlSeconds == 900)
        #expect(sources["Jokes"]?.layout == RecordLayout(rows: JSONPath("$.results")!, key: [JSONPath("id")!], next: .body(JSONPath("$.next")!)))
        #expect(sources["items"]?.layout == RecordLayout(key: [JSONPath("id")!], next: .link))
        #expect(sources["jokes"]?.mode == .merge && sources["jokes"]?.layout == nil && sources["jokes"]?.headers == [])
        #expect(try db.scalarText("SELECT settings FROM sources WHERE name = 'bank'") == #"{"max-delete":"2"}"#)
        for (name, rows) in before where !["table sources", "columns sources"].contains(name) {
            // Migration 12's one change to a row: a held sync, once recorded as failed, is held.
            let expected = name == "table sync_runs" || name == "table sync_state"
                ? rows.map { $0.contains("'held: would remove") ? $0.replacingOccurrences(of: "'failed'", with: "'held'") : $0 }.sorted()
                : rows
            #expect(after[name] == expected, "\(name) changed")
        }
        #expect(after["table sync_runs"]?.contains { $0.contains("'held'|") && $0.contains("'held: would remove 4 of 6") } == true)
        // Run ids keep their sequence through the rebuild of sync_runs.
        #expect(try db.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'sync_runs'") == sequence)
        #expect(try db.scalarText("PRAGMA foreign_key_check") == nil)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
        // Migration 19 indexed the rows cached before search came, and 18 set each source's
        // history horizon at its oldest run kept.
        for (name, kind) in try db.query("SELECT name, kind FROM sources", row: { ($0.text(0) ?? "", $0.text(1) ?? "") }) {
            #expect(try SearchIndex(database).problems(name, try #require(SourceKind(rawValue: kind))) == [], "\(name)")
            #expect(try HistoryStore(database).horizon(source: name)
                    == db.scalarText("SELECT min(finished_at) FROM sync_runs WHERE source = ?", [.text(name)]), "\(name)")
        }
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs WHERE source = 'jokes'") == 10)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs WHERE source = 'items'") == 120)
        // Still a working cache: a source's removal takes its rows and view along.
        try SourceStore(database).remove("items")
        #expect(try db.scalarInt("SELECT count(*) FROM records WHERE source = 'items'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'cached_items'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM changes WHERE source = 'items'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs WHERE source = 'items'") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_index") == db.scalarInt("SELECT count(*) FROM search_docs"))
        #expect(try db.scalarInt("SELECT count(*) FROM cached_Jokes_json") == 120)
    }

    /// Migration 0010's way of rebuilding `sources` (a new table, copy, drop, rename) failed on
    /// any cache with a json source's view: `error in view cached_x: no such table`. Views are
    /// dropped before and made after every migration now.
    @Test func aLaterMigrationThatRebuildsSourcesKeepsEveryRowAndView() throws {
        let (folder, path) = try Self.releaseCache()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try CacheDatabase(path: path, access: .write)  // at this binary's schema
        let db = try Connection(path: path)
        try db.execute("PRAGMA foreign_keys=ON")
        let before = try Self.contents(db)

        let columns = try db.query("SELECT name FROM pragma_table_info('sources')") { $0.text(0) ?? "" }.joined(separator: ", ")
        let definition = try #require(try db.scalarText("SELECT sql FROM sqlite_schema WHERE name = 'sources'"))
        let rebuild = Migrator.Migration(id: 9_999, file: "9999_rebuild_sources.sql", sql: """
            CREATE TABLE sources_new \(definition[definition.firstIndex(of: "(")!...]);
            INSERT INTO sources_new (rowid, \(columns)) SELECT rowid, \(columns) FROM sources;
            DROP TABLE sources;
            ALTER TABLE sources_new RENAME TO sources;
            """)
        try Migrator(migrations: Migrator.carried + [rebuild]).migrate(db)

        #expect(try Migrator.appliedVersion(db) == 9_999)
        let after = try Self.contents(db, like: before)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (name, rows) in before {
            #expect(after[name] == rows, "\(name) changed")
        }
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarText("PRAGMA foreign_key_check") == nil)
        // The rebuilt table still cascades.
        try db.execute("DELETE FROM sources WHERE name = 'bank'")
        #expect(try db.scalarInt("SELECT count(*) FROM transactions") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM sync_runs WHERE source = 'bank'") == 0)
    }

    /// A view unlike this binary's definition of it (an older binary's, or one changed by hand),
    /// with no migration pending, is made again when the cache is next opened for writing:
    /// built-in and per-source views alike, their rows the same as before.
    @Test func aViewUnlikeItsDefinitionIsMadeAgainOnOpen() throws {
        let (folder, path) = try Self.releaseCache()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try CacheDatabase(path: path, access: .write)  // at this binary's schema
        let db = try Connection(path: path)
        let before = try Self.contents(db)
        let sql = { (name: String) in try db.scalarText("SELECT sql FROM sqlite_schema WHERE name = ?", [.text(name)]) }
        let jokes = try #require(try sql("cached_jokes")), items = try #require(try sql("cached_items"))
        try db.execute("DROP VIEW cached_jokes; CREATE VIEW cached_jokes AS SELECT 1 AS old")
        try db.execute("DROP VIEW cached_items; CREATE VIEW cached_items AS SELECT key FROM records")
        #expect(try !DerivedViews.areCurrent(db))

        _ = try CacheDatabase(path: path, access: .write)
        #expect(try sql("cached_jokes") == jokes)
        #expect(try sql("cached_items") == items)
        #expect(try DerivedViews.areCurrent(db))
        #expect(try Self.contents(db) == before)
    }

    @Test func migrationIdsAreOneSequenceAcrossSQLAndSwift() {
        let ids = Migrator.carried.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(ids.sorted() == Array(1...ids.count))
    }
}
