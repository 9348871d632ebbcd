import FoundationEssentials
import Glibc
import CSQLite

/// What `cache check` reports.
package struct IntegrityReport: Sendable {
    /// `PRAGMA integrity_check`'s findings; empty when it answered "ok".
    package var problems: [String]
    /// `PRAGMA foreign_key_check`'s findings, as "table rowid → parent".
    package var foreignKeyProblems: [String]
    package var schemaVersion: Int
    package var knownVersion: Int
    package var isHealthy: Bool { problems.isEmpty && foreignKeyProblems.isEmpty && schemaVersion <= knownVersion }
}

package enum Integrity {
    /// Checks the database at `path` without changing it. A file too damaged to read throws
    /// a `DatabaseError` (SQLITE_CORRUPT or SQLITE_NOTADB).
    package static func check(path: String, readOnly: Bool = false) throws -> IntegrityReport {
        let db = try CacheDatabase.openForInspection(path, readOnly: readOnly)
        let problems = try db.query("PRAGMA integrity_check") { $0.text(0) ?? "" }.filter { $0 != "ok" }
        let foreignKeys = try db.query("PRAGMA foreign_key_check") {
            "\($0.text(0) ?? "?") row \($0.isNull(1) ? "?" : String($0.int(1))) → \($0.text(2) ?? "?")"
        }
        return IntegrityReport(problems: problems, foreignKeyProblems: foreignKeys,
                               schemaVersion: try Migrator.appliedVersion(db), knownVersion: Migrator().latestVersion)
    }
}
