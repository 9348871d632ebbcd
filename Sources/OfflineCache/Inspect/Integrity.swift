import FoundationEssentials
import Glibc
import CSQLite

/// What `cache check` reports.
public struct IntegrityReport: Sendable {
    /// `PRAGMA integrity_check`'s findings; empty when it answered "ok".
    public var problems: [String]
    /// `PRAGMA foreign_key_check`'s findings, as "table rowid → parent".
    public var foreignKeyProblems: [String]
    public var schemaVersion: Int
    public var knownVersion: Int
    public var isHealthy: Bool { problems.isEmpty && foreignKeyProblems.isEmpty && schemaVersion <= knownVersion }
}

public enum Integrity {
    /// Checks the database at `path` without changing it. A file too damaged to read throws
    /// a `DatabaseError` (SQLITE_CORRUPT or SQLITE_NOTADB).
    public static func check(path: String) throws -> IntegrityReport {
        let db = try CacheDatabase.openForInspection(path)
        let problems = try db.query("PRAGMA integrity_check") { $0.text(0) ?? "" }.filter { $0 != "ok" }
        let foreignKeys = try db.query("PRAGMA foreign_key_check") {
            "\($0.text(0) ?? "?") row \($0.isNull(1) ? "?" : String($0.int(1))) → \($0.text(2) ?? "?")"
        }
        return IntegrityReport(problems: problems, foreignKeyProblems: foreignKeys,
                               schemaVersion: try Migrator.appliedVersion(db), knownVersion: Migrator().latestVersion)
    }
}
