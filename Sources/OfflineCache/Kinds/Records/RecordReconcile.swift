import FoundationEssentials

/// Generic records: compared by key in their canonical form, so a record whose keys moved or
/// whose spacing changed is not an update; then the source's view, `cached_NAME`, is made
/// again when the records brought a field it did not have.
extension Reconciler {
    func applyRecords(_ set: RecordSet) throws -> ChangeCounts {
        let name = SQLValue.text(source.name)
        // By the keys' bytes, as the table's primary key tells them apart.
        var cached: [ExactText: String] = [:]
        let read = try db.cachedStatement("SELECT key, record FROM records WHERE source = ?")
        defer { read.reset() }
        try read.bind([name])
        while try read.step() { cached[ExactText(read.text(0) ?? "")] = read.text(1) ?? "" }

        var counts = ChangeCounts()
        let loading = cached.isEmpty
        if loading {
            counts.inserted = try load(set.records)
            try logLoad(kind: "record", rows: counts.inserted)
            try RecordView(db: db, source: source.name).update(fields: set.fields, nested: set.nested)
            return counts
        }
        let total = set.records.count
        for index in 0..<total {
            let record = set.records[index]
            if index % 10_000 == 0, total > 10_000 { progress?(.reconciling(rows: index, total: total)) }
            if let before = cached.removeValue(forKey: ExactText(record.key)) {
                if before != record.json {
                    try db.run("UPDATE records SET record = ?, seen_at = ? WHERE source = ? AND key = ?",
                               [.text(record.json), .text(now), name, .text(record.key)])
                    try logRecord(record.key, "updated", before: before, after: record.json)
                    counts.updated += 1
                } else if merging {
                    try db.run("UPDATE records SET seen_at = ? WHERE source = ? AND key = ?", [.text(now), name, .text(record.key)])
                }
            } else {
                try db.run("INSERT INTO records (source, key, record, seen_at) VALUES (?, ?, ?, ?)",
                           [name, .text(record.key), .text(record.json), .text(now)])
                try logRecord(record.key, "inserted", before: nil, after: record.json)
                counts.inserted += 1
            }
        }
        if !merging {
            // What is left of the cached records was not in the response (logged in key order).
            for (exact, before) in cached.sorted(by: { $0.key.text.utf8.lexicographicallyPrecedes($1.key.text.utf8) }) {
                let key = exact.text
                try db.run("DELETE FROM records WHERE source = ? AND key = ?", [name, .text(key)])
                try logRecord(key, "removed", before: before, after: nil)
                counts.deleted += 1
            }
        }
        try RecordView(db: db, source: source.name).update(fields: set.fields, nested: set.nested)
        return counts
    }

    /// Fills an empty cache: in key order (the table's, as RecordSet sorts them), 100 rows a statement.
    private func load(_ records: RecordArena) throws -> Int {
        let order = records.spans.indices  // RecordSet.finish left them in key order
        let batch = 100
        // Row i binds ?(3+2i) and ?(4+2i); every row shares the source (?1) and the time (?2).
        func insert(_ rows: Int) throws -> Statement {
            try db.cachedStatement(Self.loadInsert + " records (source, key, record, seen_at) VALUES "
                                   + (0..<rows).map { "(?1, ?\(3 + 2 * $0), ?\(4 + 2 * $0), ?2)" }.joined(separator: ", "))
        }
        var start = 0
        while start < order.count {
            let rows = order[start..<min(start + batch, order.count)]
            let statement = try insert(rows.count)
            try statement.bind(1, source.name)
            try statement.bind(2, now)
            var parameter: Int32 = 3
            try records.bytes.withUnsafeBufferPointer { bytes throws(DatabaseError) in
                for index in rows {
                    let span = records.spans[index]
                    try statement.bind(parameter, utf8: UnsafeBufferPointer(rebasing: bytes[span.key]))
                    try statement.bind(parameter + 1, utf8: UnsafeBufferPointer(rebasing: bytes[span.json]))
                    parameter += 2
                }
            }
            try statement.execute()
            start += batch
            if records.count > 10_000, start % 10_000 == 0 { progress?(.reconciling(rows: start, total: records.count)) }
        }
        return records.count
    }

    private func logRecord(_ key: String, _ change: String, before: String?, after: String?) throws {
        try db.run("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after) VALUES (?, ?, 'record', ?, ?, ?, ?)
            """, [.int(runID), .text(source.name), .text(key), .text(change), .optionalText(before), .optionalText(after)])
    }
}
