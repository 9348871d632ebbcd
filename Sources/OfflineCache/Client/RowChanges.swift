extension Cache {
    /// What a refresh changed since the preview, by row key: the rows to highlight, and the
    /// ones that went (the preview still has them, to show as removed).
    ///
    /// ```swift
    /// for await state in cache.states(of: "bank") {
    ///     if case .fresh(_, let changes) = state { print(changes.inserted, changes.updated, changes.removed) }
    /// }
    /// ```
    public struct RowChanges: Sendable, Equatable {
        /// Keys (a transaction's id, a joke's id as text, a record's key) of rows that are new.
        public var inserted: Set<String> = []
        /// Keys of rows whose content changed.
        public var updated: Set<String> = []
        /// Keys of rows the preview had that the cache no longer holds.
        public var removed: Set<String> = []

        /// Nothing inserted, updated or removed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && removed.isEmpty }
    }
}

extension Cache.RowChanges {
    /// Compares two readings of one source by key and content (not staleness or age).
    package static func between(_ old: CachedRows, _ new: CachedRows) -> Self {
        switch (old, new) {
        case let (.account(_, before), .account(_, after)):
            diff(before, after, key: \.id) { $0.type == $1.type && $0.amount == $1.amount && $0.vendor == $1.vendor && $0.date == $1.date }
        case let (.jokes(before), .jokes(after)):
            diff(before, after, key: { String($0.id) }) { $0.type == $1.type && $0.setup == $1.setup && $0.punchline == $1.punchline }
        case let (.records(_, before), .records(_, after)):
            diff(before, after, key: \.key) { $0.record == $1.record }
        case (.account, _), (.jokes, _), (.records, _):
            // The source was replaced by one of another kind between the readings: every row is new.
            Self(inserted: Set(new.ids), removed: Set(old.ids))
        }
    }

    /// Compares two readings of rows as JSON text, by key and text.
    package static func between(_ old: [Cached<String>], _ new: [Cached<String>]) -> Self {
        diff(old, new, key: \.key) { $0.value == $1.value }
    }

    /// The same changes, less the removed rows the cache still holds (`cached`, by key): with a
    /// limit, a row pushed out of the window by a new one has not gone.
    package func leavingOut(_ cached: Set<String>) -> Self {
        var changes = self
        changes.removed.subtract(cached)
        return changes
    }

    private static func diff<Row>(_ before: [Row], _ after: [Row], key: (Row) -> String, same: (Row, Row) -> Bool) -> Self {
        var old: [String: Row] = [:]
        for row in before { old[key(row)] = row }
        var changes = Self(), seen = Set<String>()
        for row in after {
            let key = key(row)
            seen.insert(key)
            if let previous = old[key] {
                if !same(previous, row) { changes.updated.insert(key) }
            } else {
                changes.inserted.insert(key)
            }
        }
        changes.removed = Set(old.keys).subtracting(seen)
        return changes
    }
}
