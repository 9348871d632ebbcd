/// What differs between two readings of one source (the preview and the reconciled rows):
/// what a refresh changed since the preview: the rows to highlight and the ones that went.
///
/// ```swift
/// for await state in cache.states(of: "bank") {
///     if case .fresh(_, let changes) = state { print(changes.inserted, changes.updated, changes.removed.count) }
/// }
/// ```
public struct RowChanges: Sendable, Equatable {
    /// Ids (transaction ids, or joke ids as text) of rows that are new.
    public var inserted: Set<String> = []
    /// Ids of rows whose content changed.
    public var updated: Set<String> = []
    /// Rows the preview had and the fresh reading does not.
    public var removed: CachedRows

    /// Nothing inserted, updated or removed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && removed.count == 0 }

    /// Compares two readings of the same source by row id and content (not staleness).
    public static func between(_ old: CachedRows, _ new: CachedRows) -> RowChanges {
        switch (old, new) {
        case let (.account(_, before), .account(_, after)):
            let (inserted, updated, removedIDs) = diff(before, after, id: \.id) { $0.type == $1.type && $0.amount == $1.amount }
            return RowChanges(inserted: inserted, updated: updated,
                              removed: .account(nil, before.filter { removedIDs.contains($0.id) }))
        case let (.jokes(before), .jokes(after)):
            let (inserted, updated, removedIDs) = diff(before, after, id: { String($0.id) }) {
                $0.type == $1.type && $0.setup == $1.setup && $0.punchline == $1.punchline
            }
            return RowChanges(inserted: inserted, updated: updated,
                              removed: .jokes(before.filter { removedIDs.contains(String($0.id)) }))
        case let (.records(columns, before), .records(_, after)):
            let (inserted, updated, removedKeys) = diff(before, after, id: \.key) { $0.record == $1.record }
            return RowChanges(inserted: inserted, updated: updated,
                              removed: .records(columns: columns, before.filter { removedKeys.contains($0.key) }))
        case (.account, _), (.jokes, _), (.records, _):
            // The source was replaced by one of another kind between the readings: every row is new.
            return RowChanges(inserted: Set(new.ids), removed: old)
        }
    }

    /// The same changes, less the removed rows the cache still holds (`cached`, by id): with a
    /// limit, a row pushed out of the window by a new one has not gone.
    package func leavingOut(_ cached: Set<String>) -> RowChanges {
        guard !cached.isEmpty else { return self }
        var changes = self
        switch removed {
        case .account(let header, let rows): changes.removed = .account(header, rows.filter { !cached.contains($0.id) })
        case .jokes(let rows): changes.removed = .jokes(rows.filter { !cached.contains(String($0.id)) })
        case .records(let columns, let rows): changes.removed = .records(columns: columns, rows.filter { !cached.contains($0.key) })
        }
        return changes
    }

    private static func diff<Row>(_ before: [Row], _ after: [Row], id: (Row) -> String,
                                  same: (Row, Row) -> Bool) -> (Set<String>, Set<String>, Set<String>) {
        var old: [String: Row] = [:]
        for row in before { old[id(row)] = row }
        var inserted = Set<String>(), updated = Set<String>(), seen = Set<String>()
        for row in after {
            let key = id(row)
            seen.insert(key)
            if let previous = old[key] {
                if !same(previous, row) { updated.insert(key) }
            } else {
                inserted.insert(key)
            }
        }
        return (inserted, updated, Set(old.keys).subtracting(seen))
    }
}
