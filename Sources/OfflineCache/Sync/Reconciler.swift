/// Writes a validated payload into the cache. Runs inside the caller's transaction.
///
/// `replace` inserts new rows, updates changed ones and deletes absent ones; identical rows
/// are not rewritten (the source's `confirmed_at` vouches for them). `merge` inserts or
/// updates by id and stamps every returned row's `seen_at`, and never deletes.
struct Reconciler {
    let db: Connection
    let source: Source
    let now: String
    /// The run whose change log entries this reconcile writes.
    let runID: Int64

    /// Records one change in the change log.
    private func log(_ kind: String, _ id: String, _ change: String, before: JSONValue?, after: JSONValue?) throws {
        try db.run("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.int(runID), .text(source.name), .text(kind), .text(id), .text(change),
                  .optionalText(before?.text), .optionalText(after?.text)])
    }

    private static func fields(_ t: (date: String, vendor: String, type: Int, amount: Double)) -> JSONValue {
        .object([("date", .string(t.date)), ("vendor", .string(t.vendor)), ("type", .int(t.type)), ("amount", .double(t.amount))])
    }

    private static func fields(_ joke: UpstreamJoke) -> JSONValue {
        .object([("id", .int(joke.id)), ("type", .string(joke.type)), ("setup", .string(joke.setup)), ("punchline", .string(joke.punchline))])
    }

    /// Returns the row counts and whether anything at all (the account header included) changed.
    func apply(_ payload: Payload) throws -> (counts: ChangeCounts, changed: Bool) {
        switch payload {
        case .account(let account): return try applyAccount(account)
        case .jokes(let jokes):
            let counts = try applyJokes(jokes)
            return (counts, counts.total > 0)
        }
    }

    private var merging: Bool { source.mode == .merge }

    private func applyAccount(_ account: UpstreamAccount) throws -> (counts: ChangeCounts, changed: Bool) {
        let name = SQLValue.text(source.name)
        let old = try db.query("SELECT name, balance FROM accounts WHERE source = ?", [name]) {
            (name: $0.text(0) ?? "", balance: $0.double(1))
        }.first
        let headerChanged = old?.name != account.name || old?.balance != account.balance
        if headerChanged {
            let after = JSONValue.object([("name", .string(account.name)), ("balance", .double(account.balance))])
            let before = old.map { JSONValue.object([("name", .string($0.name)), ("balance", .double($0.balance))]) }
            try log("account", source.name, old == nil ? "inserted" : "updated", before: before, after: after)
        }
        if headerChanged || merging {
            try db.run("""
                INSERT INTO accounts (source, name, balance, seen_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (source) DO UPDATE SET name = excluded.name, balance = excluded.balance, seen_at = excluded.seen_at
                """, [name, .text(account.name), .double(account.balance), .text(now)])
        }

        var existing: [String: (date: String, vendor: String, type: Int, amount: Double)] = [:]
        for row in try db.query("SELECT id, date, vendor, type, amount FROM transactions WHERE source = ?", [name], row: {
            (id: $0.text(0) ?? "", date: $0.text(1) ?? "", vendor: $0.text(2) ?? "", type: $0.int(3), amount: $0.double(4))
        }) {
            existing[row.id] = (row.date, row.vendor, row.type, row.amount)
        }

        var counts = ChangeCounts()
        var ordinals: [String: Int] = [:]
        var present = Set<String>()
        present.reserveCapacity(account.transactions.count)
        for item in account.transactions {
            let key = item.date + "\u{1F}" + item.vendor
            let ordinal = ordinals[key, default: 0]
            ordinals[key] = ordinal + 1
            let id = TransactionID.make(source: source.name, date: item.date, vendor: item.vendor, ordinal: ordinal)
            present.insert(id)
            if let before = existing[id] {
                if before.type != item.type || before.amount != item.amount {
                    try db.run("UPDATE transactions SET type = ?, amount = ?, seen_at = ? WHERE id = ?",
                               [.int(item.type), .double(item.amount), .text(now), .text(id)])
                    try log("transaction", id, "updated", before: Self.fields(before),
                            after: Self.fields((item.date, item.vendor, item.type, item.amount)))
                    counts.updated += 1
                } else if merging {
                    try db.run("UPDATE transactions SET seen_at = ? WHERE id = ?", [.text(now), .text(id)])
                }
            } else {
                try db.run("""
                    INSERT INTO transactions (id, source, date, vendor, ordinal, type, amount, seen_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(id), name, .text(item.date), .text(item.vendor), .int(ordinal),
                          .int(item.type), .double(item.amount), .text(now)])
                try log("transaction", id, "inserted", before: nil, after: Self.fields((item.date, item.vendor, item.type, item.amount)))
                counts.inserted += 1
            }
        }
        if !merging {
            for (id, before) in existing where !present.contains(id) {
                try db.run("DELETE FROM transactions WHERE id = ?", [.text(id)])
                try log("transaction", id, "removed", before: Self.fields(before), after: nil)
                counts.deleted += 1
            }
        }
        return (counts, headerChanged || counts.total > 0)
    }

    private func applyJokes(_ jokes: [UpstreamJoke]) throws -> ChangeCounts {
        let name = SQLValue.text(source.name)
        var existing: [Int: UpstreamJoke] = [:]
        for joke in try db.query("SELECT id, type, setup, punchline FROM jokes WHERE source = ?", [name], row: {
            UpstreamJoke(id: $0.int(0), type: $0.text(1) ?? "", setup: $0.text(2) ?? "", punchline: $0.text(3) ?? "")
        }) {
            existing[joke.id] = joke
        }

        var counts = ChangeCounts()
        var present = Set<Int>()
        for joke in jokes where present.insert(joke.id).inserted {
            if let before = existing[joke.id] {
                if before != joke {
                    try db.run("UPDATE jokes SET type = ?, setup = ?, punchline = ?, seen_at = ? WHERE source = ? AND id = ?",
                               [.text(joke.type), .text(joke.setup), .text(joke.punchline), .text(now), name, .int(joke.id)])
                    try log("joke", String(joke.id), "updated", before: Self.fields(before), after: Self.fields(joke))
                    counts.updated += 1
                } else if merging {
                    try db.run("UPDATE jokes SET seen_at = ? WHERE source = ? AND id = ?", [.text(now), name, .int(joke.id)])
                }
            } else {
                try db.run("""
                    INSERT INTO jokes (source, id, type, setup, punchline, seen_at) VALUES (?, ?, ?, ?, ?, ?)
                    """, [name, .int(joke.id), .text(joke.type), .text(joke.setup), .text(joke.punchline), .text(now)])
                try log("joke", String(joke.id), "inserted", before: nil, after: Self.fields(joke))
                counts.inserted += 1
            }
        }
        if !merging {
            for (id, before) in existing where !present.contains(id) {
                try db.run("DELETE FROM jokes WHERE source = ? AND id = ?", [name, .int(id)])
                try log("joke", String(id), "removed", before: Self.fields(before), after: nil)
                counts.deleted += 1
            }
        }
        return counts
    }
}
