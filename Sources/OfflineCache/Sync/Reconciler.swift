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
    var progress: (@Sendable (SyncProgress) -> Void)? = nil

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

    /// The transactions' reconcile: insert new rows, update changed ones, delete absent ones
    /// (replace), each change logged first; identical rows are not touched. Statements are
    /// prepared once and bound per row. An empty cache takes a shorter path: every row is new,
    /// and the change log is written in one statement.
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

        // The cached rows, by id, read in one scan. Each response row then costs a hash lookup;
        // only new, changed and (replace) absent rows reach SQLite. What is left in `cached`
        // after the loop is absent from the response.
        var cached: [UInt64: (type: Int, amount: Double)] = [:]
        cached.reserveCapacity(Int(existing))
        let scan = try db.cachedStatement("SELECT id, type, amount FROM transactions WHERE source = ?1")
        try scan.bind(1, source.name)
        while try scan.step() {
            if let key = scan.text(0).flatMap({ UInt64($0, radix: 16) }) { cached[key] = (scan.int(1), scan.double(2)) }
        }
        scan.reset()

        let insert = try db.cachedStatement("""
            INSERT INTO transactions (id, source, date, vendor, ordinal, type, amount, seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        let logInsert = try db.cachedStatement("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, after)
            VALUES (?1, ?2, 'transaction', ?3, 'inserted', json_object('date', ?4, 'vendor', ?5, 'type', ?6, 'amount', ?7))
            """)
        let logUpdate = try db.cachedStatement("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after)
            SELECT ?1, ?2, 'transaction', t.id, 'updated', \(json("t")),
                   json_object('date', t.date, 'vendor', t.vendor, 'type', ?4, 'amount', ?5)
            FROM transactions t WHERE t.id = ?3
            """)
        let update = try db.cachedStatement("UPDATE transactions SET type = ?1, amount = ?2, seen_at = ?3 WHERE id = ?4")
        let touch = try db.cachedStatement("UPDATE transactions SET seen_at = ?1 WHERE id = ?2")

        try forEachIdentified(transactions) { id, ordinal, item in
            let key = UInt64(id, radix: 16) ?? 0
            if let old = cached.removeValue(forKey: key) {
                if old.type != item.type || old.amount != item.amount {
                    try logUpdate.bind(1, Int(runID)); try logUpdate.bind(2, source.name); try logUpdate.bind(3, id)
                    try logUpdate.bind(4, item.type); try logUpdate.bind(5, item.amount)
                    try logUpdate.execute()
                    try update.bind(1, item.type); try update.bind(2, item.amount); try update.bind(3, now); try update.bind(4, id)
                    try update.execute()
                    counts.updated += 1
                } else if merging {
                    try touch.bind(1, now); try touch.bind(2, id)
                    try touch.execute()
                }
            } else {
                try insert.bind(1, id); try insert.bind(2, source.name); try insert.bind(3, item.date)
                try insert.bind(4, item.vendor); try insert.bind(5, ordinal); try insert.bind(6, item.type)
                try insert.bind(7, item.amount); try insert.bind(8, now)
                try insert.execute()
                try logInsert.bind(1, Int(runID)); try logInsert.bind(2, source.name); try logInsert.bind(3, id)
                try logInsert.bind(4, item.date); try logInsert.bind(5, item.vendor); try logInsert.bind(6, item.type)
                try logInsert.bind(7, item.amount)
                try logInsert.execute()
                counts.inserted += 1
            }
        }

        if !merging {
            let logRemove = try db.cachedStatement("""
                INSERT INTO changes (run_id, source, row_kind, row_id, change, before)
                SELECT ?1, ?2, 'transaction', t.id, 'removed', \(json("t")) FROM transactions t WHERE t.id = ?3
                """)
            let delete = try db.cachedStatement("DELETE FROM transactions WHERE id = ?1")
            for key in cached.keys {
                let id = TransactionID.hex(key)
                try logRemove.bind(1, Int(runID)); try logRemove.bind(2, source.name); try logRemove.bind(3, id)
                try logRemove.execute()
                try delete.bind(1, id)
                try delete.execute()
                counts.deleted += 1
            }
        }
        return counts
    }

    /// Gives each transaction its stable id and its ordinal among repeats of its date and vendor.
    private func forEachIdentified(_ transactions: [UpstreamTransaction],
                                   _ body: (String, Int, UpstreamTransaction) throws -> Void) throws {
        var ordinals: [DateVendor: Int] = [:]
        ordinals.reserveCapacity(transactions.count)
        for (index, item) in transactions.enumerated() {
            if index % 10_000 == 0 { progress?(.reconciling(rows: index, total: transactions.count)) }
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
