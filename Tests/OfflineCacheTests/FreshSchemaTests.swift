import CSQLite
import Foundation
import Testing
@testable import OfflineCache

/// A new file is given `FreshSchema` at once; that schema is what the migrations, run one after
/// another, leave: the same objects, the same rows, the same migrations recorded.
@Suite(.computing) struct FreshSchemaTests {
    static let generatedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/OfflineCache/Store/FreshSchema+Statements.swift").path

    /// Everything a file holds, as text: each object of `sqlite_schema` (views and shadow tables
    /// too, not their pages), every table's rows, and the migrations recorded (not when).
    static func dump(_ db: Connection) throws -> [String] {
        let objects = try db.query("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name") {
            "\($0.text(0) ?? "") \($0.text(1) ?? "") on \($0.text(2) ?? ""): \($0.text(3) ?? "")"
        }
        let tables = try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name <> 'schema_migrations' ORDER BY name") { $0.text(0) ?? "" }
        var rows: [String] = []
        for table in tables where try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = ? AND sql LIKE 'CREATE VIRTUAL TABLE%'", [.text(table)]) == 0 {
            let columns = try db.query("SELECT name FROM pragma_table_info(?)", [.text(table)]) { "quote(\"\($0.text(0) ?? "")\")" }
            rows += try db.query("SELECT \(columns.joined(separator: " || ',' || ")) FROM \"\(table)\" ORDER BY 1") { "\(table): \($0.text(0) ?? "")" }
        }
        let recorded = try db.query("SELECT id, file FROM schema_migrations ORDER BY id") { "migration \($0.int(0)) \($0.text(1) ?? "")" }
        let pragmas = try ["application_id", "user_version", "page_size", "journal_mode"].map { "\($0) \(try db.scalarText("PRAGMA \($0)") ?? "")" }
        return objects + rows + recorded + pragmas
    }

    static func file(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("fresh-schema-\(name)-\(UUID().uuidString).sqlite3").path
    }

    @Test func aNewFileIsWhatTheMigrationsLeave() throws {
        let stepped = Self.file("stepped"), fresh = Self.file("fresh")
        defer { for path in [stepped, fresh] { for side in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + side) } } }
        // One after another, as a file made by an older binary and migrated since has them.
        let steps = try Connection(path: stepped)
        try steps.configureForWriting()
        try steps.execute("PRAGMA application_id = \(CacheDatabase.applicationID)")
        try Migrator(migrations: Migrator.carried).migrate(steps)
        let statements = try FreshSchema.statements(of: steps)

        guard statements == FreshSchema.statements && FreshSchema.version == Migrator().latestVersion else {
            if ProcessInfo.processInfo.environment["CACHE_WRITE_FRESH_SCHEMA"] == "1" {
                try Self.source(version: Migrator().latestVersion, statements).write(toFile: Self.generatedFile, atomically: true, encoding: .utf8)
            }
            Issue.record("FreshSchema+Statements.swift is not what the migrations leave: run CACHE_WRITE_FRESH_SCHEMA=1 swift test --filter FreshSchemaTests, and build again")
            return
        }
        // At once, as a new file has it: the same file in every object and row.
        let database = try CacheDatabase(path: fresh, create: true)
        let (made, migrated) = (try Self.dump(database.connection), try Self.dump(steps))
        #expect(made == migrated, "only at once: \(made.filter { !migrated.contains($0) }); only step by step: \(migrated.filter { !made.contains($0) })")
        #expect(try Migrator.appliedVersion(database.connection) == Migrator().latestVersion)
    }

    /// A file already past some migrations is migrated step by step, not given the fresh schema.
    @Test func aFileWithTablesIsMigratedStepByStep() throws {
        let path = Self.file("old")
        defer { for side in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + side) } }
        let db = try Connection(path: path)
        try Migrator(migrations: Migrator.carried.filter { $0.id <= 4 }).migrate(db)
        try db.execute("INSERT INTO sources (name, kind, url, mode, ttl_s, created_at) VALUES ('kept', 'jokes', 'http://h/', 'replace', 60, '2026-11-30T00:00:00.000Z')")
        try Migrator().migrate(db)
        #expect(try db.scalarText("SELECT name FROM sources") == "kept")
        #expect(try Migrator.appliedVersion(db) == Migrator().latestVersion)
    }

    /// The generated file's text.
    static func source(version: Int, _ statements: [String]) -> String {
        func literal(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t") + "\""
        }
        return """
            // Written by FreshSchemaTests (CACHE_WRITE_FRESH_SCHEMA=1); not edited by hand.
            extension FreshSchema {
                /// The newest migration whose outcome `statements` are.
                static let version = \(version)
                static let statements: [String] = [
            \(statements.map { "        " + literal($0) + "," }.joined(separator: "\n"))
                ]
            }

            """
    }
}
