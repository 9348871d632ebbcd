import FoundationEssentials
import CSQLite

/// What `cache check` reports.
package struct IntegrityReport: Sendable {
    /// `PRAGMA integrity_check`'s findings; empty when it answered "ok".
    package var problems: [String]
    /// `PRAGMA foreign_key_check`'s findings, as "table rowid → parent".
    package var foreignKeyProblems: [String]
    /// Where the search index and the rows it indexes disagree (`cache reindex` mends it); nil
    /// for a cache from before search, which has no index yet.
    package var searchProblems: [String]?
    package var schemaVersion: Int
    package var knownVersion: Int
    package var isHealthy: Bool { problems.isEmpty && foreignKeyProblems.isEmpty && (searchProblems ?? []).isEmpty && schemaVersion <= knownVersion }
}

package enum Integrity {
    /// Checks the database at `path` without changing it. A file too damaged to read throws
    /// a `DatabaseError` (SQLITE_CORRUPT or SQLITE_NOTADB).
    package static func check(path: String, readOnly: Bool = false) throws -> IntegrityReport {
        let db = try CacheDatabase.openForInspection(path, readOnly: readOnly)
        // What integrity_check found before it gave up on a page too damaged to walk, kept.
        var problems: [String] = []
        if let stopped = integrityFindings(db, into: &problems) {
            guard stopped.isCorruptionOrIO else { throw stopped }
            problems.append("the check stopped at a page too damaged to read (\(stopped.message))")
        }
        let foreignKeys = try db.query("PRAGMA foreign_key_check") {
            "\($0.text(0) ?? "?") row \($0.isNull(1) ? "?" : String($0.int(1))) → \($0.text(2) ?? "?")"
        }
        return IntegrityReport(problems: problems, foreignKeyProblems: foreignKeys, searchProblems: try searchProblems(db, path: path, readOnly: readOnly),
                               schemaVersion: try Migrator.appliedVersion(db), knownVersion: Migrator().latestVersion)
    }

    /// `PRAGMA integrity_check`'s findings, one a line, into `problems`; the error it stopped
    /// at, if it did.
    private static func integrityFindings(_ db: Connection, into problems: inout [String]) -> DatabaseError? {
        let check: Statement
        do { check = try db.cachedStatement("PRAGMA integrity_check") } catch { return error }
        defer { check.reset() }
        do {
            while try check.step() {
                if let text = check.text(0), text != "ok" { problems += text.split(separator: "\n").map(String.init) }
            }
        } catch {
            return error
        }
        return nil
    }

    /// The search index against the rows of every source whose kind this binary knows; FTS5's
    /// own check of the index too, where the file may be written (it is an `INSERT`).
    private static func searchProblems(_ db: Connection, path: String, readOnly: Bool) throws -> [String]? {
        guard try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name IN ('search_docs', 'search_index')") == 2 else { return nil }
        let index = SearchIndex(db: db)
        var problems = readOnly ? [] : [SearchIndex.structureProblem(path: path)].compactMap { $0 }
        // Syncs that landed their rows but could not update the index.
        for damage in try index.damage() {
            problems.append("a sync of '\(damage.source)' at \(damage.since) could not update the search index (\(damage.reason)); its search results are out of step")
        }
        // FTS5 reads its config and structure to answer any query: an index it cannot read is
        // found without writing too (a replica's check, where its own check cannot run). The
        // query is ours and always valid, so any error it meets is the index's.
        do {
            _ = try db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH '\"a\"'")
        } catch {
            noteUnreadableIndex(error, in: &problems)
        }
        do {
            // Only a built source should have documents (before migration 23, every one with search on).
            let built = try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'search_built'") == 1
                ? "search = 1 AND name IN (SELECT source FROM search_built)" : "search = 1"
            for (name, kind, searchable) in try db.query("SELECT name, kind, \(built) FROM sources ORDER BY name",
                                                         row: { ($0.text(0) ?? "", $0.text(1) ?? "", $0.int(2) != 0) }) {
                guard let kind = SourceKind(rawValue: kind) else { continue }
                problems += try index.problems(name, kind, searchable: searchable)
            }
        } catch where SearchIndex.isDamage(error) {
            noteUnreadableIndex(error, in: &problems)  // a file before migration 25 reads the text from the index
        }
        return problems
    }

    /// An index FTS5 cannot read at all (its config damaged, say), read-only or not: said once.
    private static func noteUnreadableIndex(_ error: Error, in problems: inout [String]) {
        guard !problems.contains(where: { $0.hasPrefix("the search index is damaged") || $0.hasPrefix("the search index cannot be read") }) else { return }
        problems.append("the search index cannot be read (\((error as? DatabaseError)?.message ?? "\(error)"))")
    }
}
