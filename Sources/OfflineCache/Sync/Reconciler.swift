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

        let counts = try reconcileTransactions(account.transactions)
        return (counts, headerChanged || counts.total > 0)
    }

    /// The transactions' reconcile, set-based: the response goes into a temporary table and a
    /// handful of statements insert, update and delete only what differs (logging each change
    /// first), so the work is SQLite's, in C, with its indexes. An empty cache skips the
    /// temporary table: every row is new.
    private func reconcileTransactions(_ transactions: [UpstreamTransaction]) throws -> ChangeCounts {
        let name = SQLValue.text(source.name)
        let existing = try db.scalarInt("SELECT count(*) FROM transactions WHERE source = ?", [name]) ?? 0
        /// The change log's JSON of a transaction row, built by SQLite.
        func json(_ alias: String) -> String {
            "json_object('date', \(alias).date, 'vendor', \(alias).vendor, 'type', \(alias).type, 'amount', \(alias).amount)"
        }
        var counts = ChangeCounts()

        if existing == 0 {
            let insert = try db.cachedStatement("""
                INSERT INTO transactions (id, source, date, vendor, ordinal, type, amount, seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
            try forEachIdentified(transactions) { id, ordinal, item in
                try insert.bind(1, id); try insert.bind(2, source.name); try insert.bind(3, item.date)
                try insert.bind(4, item.vendor); try insert.bind(5, ordinal); try insert.bind(6, item.type)
                try insert.bind(7, item.amount); try insert.bind(8, now)
                try insert.execute()
            }
            counts.inserted = transactions.count
            try db.run("""
                INSERT INTO changes (run_id, source, row_kind, row_id, change, after)
                SELECT ?1, ?2, 'transaction', t.id, 'inserted', \(json("t")) FROM transactions t WHERE t.source = ?2
                """, [.int(runID), name])
            return counts
        }

        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS incoming (
                id TEXT PRIMARY KEY, date TEXT, vendor TEXT, ordinal INTEGER, type INTEGER, amount REAL) WITHOUT ROWID;
            DELETE FROM temp.incoming;
            """)
        let stage = try db.cachedStatement("INSERT INTO temp.incoming (id, date, vendor, ordinal, type, amount) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        try forEachIdentified(transactions) { id, ordinal, item in
            try stage.bind(1, id); try stage.bind(2, item.date); try stage.bind(3, item.vendor)
            try stage.bind(4, ordinal); try stage.bind(5, item.type); try stage.bind(6, item.amount)
            try stage.execute()
        }
        let run = SQLValue.int(runID)
        // New rows: logged, then inserted.
        try db.run("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, after)
            SELECT ?1, ?2, 'transaction', i.id, 'inserted', \(json("i")) FROM temp.incoming i
            WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = i.id)
            """, [run, name])
        try db.run("""
            INSERT INTO transactions (id, source, date, vendor, ordinal, type, amount, seen_at)
            SELECT i.id, ?1, i.date, i.vendor, i.ordinal, i.type, i.amount, ?2 FROM temp.incoming i
            WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = i.id)
            """, [name, .text(now)])
        counts.inserted = db.changes
        // Changed rows: logged with both versions, then updated; identical rows are not touched.
        try db.run("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after)
            SELECT ?1, ?2, 'transaction', t.id, 'updated', \(json("t")), \(json("i"))
            FROM temp.incoming i JOIN transactions t ON t.id = i.id
            WHERE t.type != i.type OR t.amount != i.amount
            """, [run, name])
        try db.run("""
            UPDATE transactions SET type = i.type, amount = i.amount, seen_at = ?1
            FROM temp.incoming i WHERE transactions.id = i.id AND (transactions.type != i.type OR transactions.amount != i.amount)
            """, [.text(now)])
        counts.updated = db.changes
        if merging {
            // A merge response confirms the rows it returned.
            try db.run("UPDATE transactions SET seen_at = ?1 WHERE id IN (SELECT id FROM temp.incoming)", [.text(now)])
        } else {
            // Absent rows: logged, then removed.
            try db.run("""
                INSERT INTO changes (run_id, source, row_kind, row_id, change, before)
                SELECT ?1, ?2, 'transaction', t.id, 'removed', \(json("t")) FROM transactions t
                WHERE t.source = ?2 AND NOT EXISTS (SELECT 1 FROM temp.incoming i WHERE i.id = t.id)
                """, [run, name])
            try db.run("""
                DELETE FROM transactions WHERE source = ?1 AND NOT EXISTS (SELECT 1 FROM temp.incoming i WHERE i.id = transactions.id)
                """, [name])
            counts.deleted = db.changes
        }
        try db.execute("DELETE FROM temp.incoming")
        return counts
    }

    /// Gives each transaction its stable id and its ordinal among repeats of its date and vendor.
    private func forEachIdentified(_ transactions: [UpstreamTransaction],
                                   _ body: (String, Int, UpstreamTransaction) throws -> Void) throws {
        var ordinals: [DateVendor: Int] = [:]
        ordinals.reserveCapacity(transactions.count)
        for item in transactions {
            let key = DateVendor(date: item.date, vendor: item.vendor)
            let ordinal = ordinals[key, default: 0]
            ordinals[key] = ordinal + 1
            try body(TransactionID.make(source: source.name, date: item.date, vendor: item.vendor, ordinal: ordinal), ordinal, item)
        }
    }

    private struct DateVendor: Hashable {
        let date: String
        let vendor: String
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
