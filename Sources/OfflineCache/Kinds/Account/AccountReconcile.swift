import FoundationEssentials

/// The transactions' reconcile. The table is clustered on (source, date, vendor, ordinal), so
/// the response is put in that order first; then an empty cache is loaded with appends only,
/// and a filled one is compared in one ordered pass beside the cached rows (a merge join),
/// which `readCachedTransactions` reads in the same transaction. Only new, changed and
/// (replace) absent rows are written, each logged.
extension Reconciler {
    /// The account header, then its transactions.
    func applyAccount(_ account: UpstreamAccount) throws -> (counts: ChangeCounts, changed: Bool) {
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

        let counts = try reconcileTransactions(account.transactions, cached: try readCachedTransactions())
        return (counts, headerChanged || counts.total > 0)
    }

    /// The source's cached transactions in table order, keys and values only: what the merge
    /// join compares the response with.
    func readCachedTransactions() throws -> [StoredTransaction] {
        let scan = try db.cachedStatement("""
            SELECT date, vendor, ordinal, type, amount FROM transactions WHERE source = ?1 ORDER BY date, vendor, ordinal
            """)
        try scan.bind(1, source.name)
        defer { scan.reset() }
        var rows: [StoredTransaction] = []
        var vendors = RecentTexts()
        while try scan.step() {
            // The cache stores only valid dates; a row edited by hand to hold another sorts first.
            rows.append(StoredTransaction(date: scan.withText(0) { TransactionDate(iso: $0) } ?? TransactionDate(digits: 0),
                                          vendor: scan.withText(1) { vendors.text($0) }, ordinal: Int32(truncatingIfNeeded: scan.int(2)),
                                          type: scan.int(3), amount: scan.double(4)))
        }
        return rows
    }

    func reconcileTransactions(_ items: [UpstreamTransaction], cached: [StoredTransaction]) throws -> ChangeCounts {
        let order = Self.tableOrder(items)
        let isEmpty = cached.isEmpty
        let writer = try TransactionWriter(db: db, source: source.name, now: now, runID: runID, logEachRow: !isEmpty)
        var counts = ChangeCounts()

        if isEmpty {
            // In statements of 100 rows: SQLite's per-statement work (opening the table, checking
            // the transaction) is paid once for each 100.
            let whole = order.count - order.count % TransactionLoad.rowsPerStatement
            try TransactionLoad.insert(items, order[..<whole], db: db, source: source.name, now: now) { rows in
                progress?(.reconciling(rows: rows, total: order.count))
            }
            for row in order[whole...] {
                try writer.insert(items[Int(row.index)], ordinal: Int(row.ordinal))
            }
            counts.inserted = order.count
            try logLoad(kind: "transaction", rows: order.count)
            return counts
        }

        // What differs, found by walking the response beside the cached rows, both in table order.
        var inserts: [Int32] = [], touches: [Int32] = []
        var updates: [(position: Int32, before: StoredTransaction)] = [], removals: [StoredTransaction] = []
        var next = 0
        for row in cached {
            if next % 10_000 == 0 { progress?(.reconciling(rows: next, total: order.count)) }
            // Response rows that sort before this cached row are new.
            while next < order.count, Self.compare(items[Int(order[next].index)], Int(order[next].ordinal), row) < 0 {
                inserts.append(Int32(next))
                next += 1
            }
            if next < order.count, Self.compare(items[Int(order[next].index)], Int(order[next].ordinal), row) == 0 {
                let item = items[Int(order[next].index)]
                if item.type != row.type || item.amount != row.amount {
                    updates.append((Int32(next), row))
                } else if merging {
                    touches.append(Int32(next))
                }
                next += 1
            } else if !merging {
                removals.append(row)
            }
        }
        inserts.append(contentsOf: (next..<order.count).lazy.map { Int32($0) })

        for position in inserts {
            try writer.insert(items[Int(order[Int(position)].index)], ordinal: Int(order[Int(position)].ordinal))
        }
        for (position, before) in updates {
            try writer.update(items[Int(order[Int(position)].index)], before: before)
        }
        for position in touches {
            try writer.touch(items[Int(order[Int(position)].index)], ordinal: Int(order[Int(position)].ordinal))
        }
        for row in removals {
            try writer.remove(row)
        }
        counts.inserted = inserts.count
        counts.updated = updates.count
        counts.deleted = removals.count
        return counts
    }

    /// A response row's place in table order and its ordinal among repeats of its date and vendor.
    struct Keyed {
        var index: Int32
        var ordinal: Int32
    }

    /// The response in table order: by date, then vendor (as bytes, as SQLite compares text),
    /// then response order, which also numbers repeats of a date and vendor. Upstream usually
    /// sends rows by date already; then nothing is sorted.
    static func tableOrder(_ items: [UpstreamTransaction]) -> [Keyed] {
        guard items.indices.dropFirst().allSatisfy({ compareKeys(items[$0 - 1], items[$0]) <= 0 }) else {
            return sortedByKey(items)
        }
        var order = (0..<items.count).map { Keyed(index: Int32($0), ordinal: 0) }
        for position in order.indices.dropFirst() where compareKeys(items[position - 1], items[position]) == 0 {
            order[position].ordinal = order[position - 1].ordinal + 1
        }
        return order
    }

    /// The response sorted by date, vendor bytes and response order, with no comparison of rows:
    /// each distinct vendor is numbered once (one hash a row) and ranked by its bytes, then the
    /// rows are radix-sorted by vendor rank and, stably, by date, so response order breaks ties.
    /// The ordinals come from the sorted keys, with no string compared again.
    private static func sortedByKey(_ items: [UpstreamTransaction]) -> [Keyed] {
        var distinct = DistinctTexts()
        let vendorOf = items.map { distinct.number($0.vendor) }
        let vendors = distinct.texts
        var rankOf = [UInt32](repeating: 0, count: vendors.count)
        for (rank, number) in vendors.indices.sorted(by: { compareBytes(vendors[$0], vendors[$1]) < 0 }).enumerated() {
            rankOf[number] = UInt32(rank)
        }

        // Dates as offsets from the earliest, so the sort passes over only the bits they span.
        let earliest = items.lazy.map(\.date.digits).min() ?? 0
        var keys = items.indices.map { index in
            SortKey(date: UInt64(bitPattern: items[index].date.digits &- earliest),
                    vendor: rankOf[Int(vendorOf[index])], index: UInt32(truncatingIfNeeded: index))
        }
        RadixSort.sort(&keys, bits: RadixSort.bitWidth(UInt64(vendors.count)), by: { UInt64($0.vendor) })
        RadixSort.sort(&keys, bits: RadixSort.bitWidth(keys.lazy.map(\.date).max() ?? 0), by: \.date)

        var order = [Keyed]()
        order.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
            let repeated = position > 0 && keys[position - 1].date == key.date && keys[position - 1].vendor == key.vendor
            order.append(Keyed(index: Int32(bitPattern: key.index), ordinal: repeated ? order[position - 1].ordinal + 1 : 0))
        }
        return order
    }

    private struct SortKey {
        /// The date's digits less the earliest date's.
        var date: UInt64
        /// The vendor's rank by its bytes.
        var vendor: UInt32
        /// The response position.
        var index: UInt32
    }

    /// Orders two response rows by date, then vendor bytes: negative, zero or positive.
    private static func compareKeys(_ a: UpstreamTransaction, _ b: UpstreamTransaction) -> Int {
        if a.date != b.date { return a.date < b.date ? -1 : 1 }
        return compareBytes(a.vendor, b.vendor)
    }

    /// Orders a response row against a cached row by the table's key.
    private static func compare(_ item: UpstreamTransaction, _ ordinal: Int, _ cached: StoredTransaction) -> Int {
        if item.date != cached.date { return item.date < cached.date ? -1 : 1 }
        let byVendor = compareBytes(item.vendor, cached.vendor)
        if byVendor != 0 { return byVendor }
        let cachedOrdinal = Int(cached.ordinal)
        return ordinal == cachedOrdinal ? 0 : ordinal < cachedOrdinal ? -1 : 1
    }

    /// Text compared as SQLite's BINARY collation does: UTF-8 bytes, shorter first on a tie.
    /// (Swift's own String order compares Unicode canonically, which SQLite does not.)
    static func compareBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        let byBytes = common == 0 ? 0 : Int(Memory.compare(a.baseAddress!, b.baseAddress!, count: common))
        return byBytes != 0 ? byBytes : a.count - b.count
    }

    static func compareBytes(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { a in b.withUTF8 { b in compareBytes(a, b) } }
    }

    func logLoad(kind: String, rows: Int) throws {
        guard rows > 0 else { return }
        try db.run("INSERT INTO loads (run_id, source, row_kind, rows) VALUES (?, ?, ?, ?)",
                   [.int(runID), .text(source.name), .text(kind), .int(rows)])
    }
}

/// A cached transaction as the merge join compares it: its key and values, without its id
/// (looked up only for the rows that change) and seen_at.
struct StoredTransaction {
    let date: TransactionDate
    let vendor: String
    let ordinal: Int32
    let type: Int
    let amount: Double
}

/// The prepared writes of one transactions reconcile. The source, the time and the run are
/// bound once; each row binds only its own values, dates and ids from stack bytes.
private struct TransactionWriter {
    let insertRow, logInsert, updateRow, logUpdate, touchRow, deleteRow, logRemove, idOf: Statement
    let ids: TransactionID
    /// False for a load into an empty cache: the load is logged once, not row by row.
    let logEachRow: Bool

    init(db: Connection, source: String, now: String, runID: Int64, logEachRow: Bool) throws {
        ids = TransactionID(source: source)
        self.logEachRow = logEachRow
        let fields = "json_object('date', ?4, 'vendor', ?5, 'type', ?6, 'amount', ?7)"
        insertRow = try db.cachedStatement("""
            INSERT INTO transactions (id, source, date, vendor, ordinal, type, amount, seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        logInsert = try db.cachedStatement("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, after) VALUES (?1, ?2, 'transaction', ?3, 'inserted', \(fields))
            """)
        updateRow = try db.cachedStatement("""
            UPDATE transactions SET type = ?1, amount = ?2, seen_at = ?3 WHERE source = ?4 AND date = ?5 AND vendor = ?6 AND ordinal = ?7
            """)
        logUpdate = try db.cachedStatement("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after)
            VALUES (?1, ?2, 'transaction', ?3, 'updated', \(fields), json_object('date', ?4, 'vendor', ?5, 'type', ?8, 'amount', ?9))
            """)
        touchRow = try db.cachedStatement("""
            UPDATE transactions SET seen_at = ?1 WHERE source = ?2 AND date = ?3 AND vendor = ?4 AND ordinal = ?5
            """)
        deleteRow = try db.cachedStatement("DELETE FROM transactions WHERE source = ?1 AND date = ?2 AND vendor = ?3 AND ordinal = ?4")
        idOf = try db.cachedStatement("SELECT id FROM transactions WHERE source = ?1 AND date = ?2 AND vendor = ?3 AND ordinal = ?4")
        logRemove = try db.cachedStatement("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before) VALUES (?1, ?2, 'transaction', ?3, 'removed', \(fields))
            """)
        for statement in [insertRow, logInsert, updateRow, logUpdate, touchRow, deleteRow, logRemove, idOf] { statement.reset() }
        try insertRow.bind(2, source); try insertRow.bind(8, now)
        for log in [logInsert, logUpdate, logRemove] {
            try log.bind(1, Int(runID)); try log.bind(2, source)
        }
        try updateRow.bind(3, now); try updateRow.bind(4, source)
        try touchRow.bind(1, now); try touchRow.bind(2, source)
        try deleteRow.bind(1, source)
        try idOf.bind(1, source)
    }

    /// A cached row's stored id, for its change log entry.
    private func storedID(_ row: StoredTransaction) throws -> String {
        try row.date.withISOBytes { try idOf.bind(2, utf8: $0) }
        try idOf.bind(3, row.vendor); try idOf.bind(4, Int(row.ordinal))
        defer { idOf.rewind() }
        return try idOf.step() ? idOf.text(0) ?? "" : ""
    }

    func insert(_ item: UpstreamTransaction, ordinal: Int) throws {
        let hash = ids.hash(date: item.date, vendor: item.vendor, ordinal: ordinal)
        try TransactionID.withHexBytes(hash) { try insertRow.bind(1, utf8: $0) }
        try item.date.withISOBytes { try insertRow.bind(3, utf8: $0) }
        try insertRow.bind(4, item.vendor); try insertRow.bind(5, ordinal)
        try insertRow.bind(6, item.type); try insertRow.bind(7, item.amount)
        try insertRow.execute()
        guard logEachRow else { return }
        try TransactionID.withHexBytes(hash) { try logInsert.bind(3, utf8: $0) }
        try bindFields(logInsert, item.date, item.vendor, item.type, item.amount)
        try logInsert.execute()
    }

    func update(_ item: UpstreamTransaction, before: StoredTransaction) throws {
        try logUpdate.bind(3, try storedID(before))
        try updateRow.bind(1, item.type); try updateRow.bind(2, item.amount)
        try item.date.withISOBytes { try updateRow.bind(5, utf8: $0) }
        try updateRow.bind(6, item.vendor); try updateRow.bind(7, Int(before.ordinal))
        try updateRow.execute()
        try bindFields(logUpdate, before.date, before.vendor, before.type, before.amount)
        try logUpdate.bind(8, item.type); try logUpdate.bind(9, item.amount)
        try logUpdate.execute()
    }

    func touch(_ item: UpstreamTransaction, ordinal: Int) throws {
        try item.date.withISOBytes { try touchRow.bind(3, utf8: $0) }
        try touchRow.bind(4, item.vendor); try touchRow.bind(5, ordinal)
        try touchRow.execute()
    }

    func remove(_ row: StoredTransaction) throws {
        try logRemove.bind(3, try storedID(row))
        try bindFields(logRemove, row.date, row.vendor, row.type, row.amount)
        try logRemove.execute()
        try row.date.withISOBytes { try deleteRow.bind(2, utf8: $0) }
        try deleteRow.bind(3, row.vendor); try deleteRow.bind(4, Int(row.ordinal))
        try deleteRow.execute()
    }

    /// A change log entry's fields, parameters 4 to 7.
    private func bindFields(_ log: Statement, _ date: TransactionDate, _ vendor: String, _ type: Int, _ amount: Double) throws {
        try date.withISOBytes { try log.bind(4, utf8: $0) }
        try log.bind(5, vendor); try log.bind(6, type); try log.bind(7, amount)
    }
}
