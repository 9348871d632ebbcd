import FoundationEssentials

/// The outbox as it is read: edits, one edit, a row's edit history.
extension OutboxStore {
    static let columns = "id, source, key, op, body, state, attempts, made_at, next_at, answer_status, answer, base, remote"

    static func edit(_ row: Statement) -> LocalEdit {
        LocalEdit(id: row.text(0) ?? "", source: row.text(1) ?? "", key: row.text(2) ?? "",
                    operation: LocalEdit.Operation(rawValue: row.text(3) ?? "") ?? .patch, body: row.text(4),
                    state: LocalEdit.Phase(rawValue: row.text(5) ?? "") ?? .queued, attempts: Int(row.int(6)),
                    madeAt: row.text(7) ?? "", nextAt: row.text(8), answerStatus: row.isNull(9) ? nil : Int(row.int(9)),
                    answer: row.text(10), base: row.text(11), remote: row.text(12))
    }

    /// The edits not yet applied (every edit with `all`), oldest first; of the sources named, or all.
    package func edits(of sources: [String] = [], all: Bool = false) throws -> [LocalEdit] {
        let only = sources.isEmpty ? "" : " AND source IN (SELECT value FROM json_each(?))"
        let values: [SQLValue] = sources.isEmpty ? [] : [.text(JSONValue.array(sources.map { .string($0) }).compact)]
        return try db.query("SELECT \(Self.columns) FROM outbox WHERE \(all ? "1" : "state NOT IN ('applied', 'dropped')")\(only) ORDER BY seq",
                            values, row: Self.edit)
    }

    /// The edit with this id (or the one id it begins with, 8 characters at least).
    package func edit(_ id: String) throws(CacheError) -> LocalEdit {
        do {
            let found = try db.query("SELECT \(Self.columns) FROM outbox WHERE id = ?1 OR (length(?1) >= 8 AND substr(id, 1, length(?1)) = ?1) LIMIT 2",
                                     [.text(id.lowercased())], row: Self.edit)
            guard found.count == 1 else {
                throw CacheError.refusedEdit(found.isEmpty ? "no edit \(id) in the outbox ('cache outbox' lists them)" : "\(id) names more than one edit: give more of its id")
            }
            return found[0]
        } catch let error as CacheError { throw error } catch { throw .database(SyncEngine.databaseError(error)) }
    }

    /// The life of every edit of `key` of `source`, oldest first: (time, edit id, event, detail).
    package func history(source: String, key: String) throws -> [(at: String, edit: String, event: String, detail: String?)] {
        try db.query("""
            SELECT l.at, l.edit, l.event, l.detail FROM outbox_log l JOIN outbox o ON o.id = l.edit
            WHERE o.source = ? AND o.key = ? ORDER BY l.id
            """, [.text(source), .text(key)]) { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2) ?? "", $0.text(3)) }
    }
}
