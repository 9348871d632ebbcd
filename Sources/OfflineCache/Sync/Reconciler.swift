/// Writes a validated payload into the cache. Runs inside the caller's transaction.
///
/// `replace` inserts new rows, updates changed ones and deletes absent ones; identical rows
/// are not rewritten (the source's `confirmed_at` vouches for them). `merge` inserts or
/// updates by id and stamps every returned row's `seen_at`, and never deletes. Every change
/// is logged; rows loaded into an empty cache are logged as one load.
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
    /// `cached` is `readCachedTransactions()`, read in the same transaction (read again if nil).
    func apply(_ payload: Payload, cached: [StoredTransaction]? = nil) throws -> (counts: ChangeCounts, changed: Bool) {
        switch payload {
        case .account(let account): return try applyAccount(account, cached: cached ?? readCachedTransactions() ?? [])
        case .jokes(let jokes):
            let counts = try applyJokes(jokes)
            return (counts, counts.total > 0)
        case .records(let set):
            let counts = try applyRecords(set)
            return (counts, counts.total > 0)
        }
    }

    var merging: Bool { source.mode == .merge }

    private func applyAccount(_ account: UpstreamAccount, cached: [StoredTransaction]) throws -> (counts: ChangeCounts, changed: Bool) {
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

        let counts = try reconcileTransactions(account.transactions, cached: cached)
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
        // Into an empty cache every joke is new: logged as one load, not joke by joke.
        let loading = existing.isEmpty
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
                if !loading { try log("joke", String(joke.id), "inserted", before: nil, after: Self.fields(joke)) }
                counts.inserted += 1
            }
        }
        if loading { try logLoad(kind: "joke", rows: counts.inserted) }
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
