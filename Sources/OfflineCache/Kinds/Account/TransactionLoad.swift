
/// A load into an empty cache: the response's rows inserted in table order, 100 to a statement.
///
/// A second thread prepares the rows a few thousand ahead of SQLite: each row's text (its id, a
/// hash of its key; its date; its vendor) written into a buffer that SQLite then reads in place,
/// and its numbers beside it. In a random-order load, that preparation, with reading each row from
/// wherever it lies in the response, was about a tenth of the sync's time, spent on the core that
/// SQLite runs on. SQLite's thread now only binds and steps.
struct TransactionLoad {
    static let rowsPerStatement = 100
    /// Per row: id, date, vendor, ordinal, type, amount; the source and the time are shared.
    private static let valuesPerRow = 6
    /// Rows a thread hands over at once, and how many such chunks can be ready ahead: a handover
    /// takes a lock, so it happens per thousand rows, not per row.
    static let rowsPerChunk = 1_000
    static let chunksAhead = 4

    /// Inserts `order`'s rows of `items` (whole statements of 100 only; the caller inserts the
    /// rest), calling `progress` every 10,000 rows. The preparing thread has ended when it returns
    /// or throws.
    static func insert(_ items: [UpstreamTransaction], _ order: ArraySlice<Reconciler.Keyed>, db: Connection,
                       source: String, now: String, progress: (Int) -> Void) throws {
        precondition(order.count % rowsPerStatement == 0 && rowsPerChunk % rowsPerStatement == 0)
        guard !order.isEmpty else { return }
        let statement = try insertStatement(db: db, source: source, now: now)
        let handover = PreparedRowsHandover(items: items, order: order, source: source)
        let preparer = JoinedThread { handover.prepareAll() }
        defer {
            withExtendedLifetime(handover) {
                handover.cancel()
                preparer.join()
                // The cached statement outlives the chunks: nothing of them may stay bound.
                statement.clearBindings()
            }
        }
        var inserted = 0
        for chunk in 0..<handover.chunkCount {
            let rows = handover.waitForChunk(chunk)
            // Every value of a statement is bound again before it runs: a released chunk's buffer
            // is refilled (or its text moved) while the statement still points into it.
            var row = 0
            while row < rows.count {
                if inserted % 10_000 == 0 { progress(inserted) }
                for slot in 0..<rowsPerStatement {
                    let first = Int32(3 + slot * valuesPerRow)
                    try statement.bind(first, kept: rows.id(row + slot))
                    try statement.bind(first + 1, kept: rows.date(row + slot))
                    try statement.bind(first + 2, kept: rows.vendor(row + slot))
                    try statement.bind(first + 3, Int(rows.ordinals[row + slot]))
                    try statement.bind(first + 4, rows.types[row + slot])
                    try statement.bind(first + 5, rows.amounts[row + slot])
                }
                try statement.execute()
                row += rowsPerStatement
                inserted += rowsPerStatement
            }
            handover.release(chunk)
        }
    }

    /// `INSERT … VALUES (…), (…), …` of 100 rows: per row its id, date, vendor, ordinal, type and
    /// amount (from ?3 on); the source (?1) and the time (?2) are shared, bound once.
    private static func insertStatement(db: Connection, source: String, now: String) throws -> Statement {
        let values = (0..<rowsPerStatement).map { row in
            let first = 3 + row * valuesPerRow
            return "(?\(first), ?1, ?\(first + 1), ?\(first + 2), ?\(first + 3), ?\(first + 4), ?\(first + 5), ?2)"
        }
        let statement = try db.cachedStatement(Reconciler.loadInsert
            + " transactions (id, source, date, vendor, ordinal, type, amount, seen_at) VALUES " + values.joined(separator: ", "))
        statement.reset()
        try statement.bind(1, source)
        try statement.bind(2, now)
        return statement
    }
}

/// Up to a thousand rows, prepared: each row's id, date and vendor one after another in `text`,
/// its numbers in arrays of their own.
final class PreparedRows {
    private(set) var text: UnsafeMutableBufferPointer<UInt8>
    let starts, vendorCounts, ordinals: UnsafeMutableBufferPointer<Int32>
    let types: UnsafeMutableBufferPointer<Int>
    let amounts: UnsafeMutableBufferPointer<Double>
    private(set) var count = 0

    init() {
        let rows = TransactionLoad.rowsPerChunk
        text = .allocate(capacity: rows * 64)
        starts = .allocate(capacity: rows)
        vendorCounts = .allocate(capacity: rows)
        ordinals = .allocate(capacity: rows)
        types = .allocate(capacity: rows)
        amounts = .allocate(capacity: rows)
    }

    deinit {
        for buffer in [starts, vendorCounts, ordinals] { buffer.deallocate() }
        text.deallocate()
        types.deallocate()
        amounts.deallocate()
    }

    private static let fixed = TransactionID.hexCount + TransactionDate.isoCount

    /// Fills these rows from `order`'s rows of `items`.
    func fill(_ items: [UpstreamTransaction], _ order: ArraySlice<Reconciler.Keyed>, ids: TransactionID) {
        let needed = order.reduce(0) { $0 + Self.fixed + items[Int($1.index)].vendor.utf8.count }
        if needed > text.count {
            text.deallocate()
            text = .allocate(capacity: needed * 2)
        }
        let base = text.baseAddress!
        var end = 0
        for (row, keyed) in order.enumerated() {
            var item = items[Int(keyed.index)]
            let dateAt = end + TransactionID.hexCount, vendorAt = dateAt + TransactionDate.isoCount
            item.date.writeISO(into: base + dateAt)
            let vendorCount = item.vendor.withUTF8 { bytes in
                if !bytes.isEmpty { (base + vendorAt).initialize(from: bytes.baseAddress!, count: bytes.count) }
                return bytes.count
            }
            let hash = ids.hash(iso: UnsafeBufferPointer(start: base + dateAt, count: TransactionDate.isoCount),
                                vendor: UnsafeBufferPointer(start: base + vendorAt, count: vendorCount), ordinal: Int(keyed.ordinal))
            TransactionID.writeHex(hash, into: base + end)
            starts[row] = Int32(end)
            vendorCounts[row] = Int32(vendorCount)
            ordinals[row] = keyed.ordinal
            types[row] = item.type
            amounts[row] = item.amount
            end = vendorAt + vendorCount
        }
        count = order.count
    }

    func id(_ row: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: text[Int(starts[row])..<(Int(starts[row]) + TransactionID.hexCount)])
    }

    func date(_ row: Int) -> UnsafeBufferPointer<UInt8> {
        let at = Int(starts[row]) + TransactionID.hexCount
        return UnsafeBufferPointer(rebasing: text[at..<(at + TransactionDate.isoCount)])
    }

    func vendor(_ row: Int) -> UnsafeBufferPointer<UInt8> {
        let at = Int(starts[row]) + TransactionID.hexCount + TransactionDate.isoCount
        return UnsafeBufferPointer(rebasing: text[at..<(at + Int(vendorCounts[row]))])
    }
}

/// The chunks between the preparing thread and SQLite's: a ring of `chunksAhead` buffers, each
/// either being filled, ready, or being inserted. `prepared` and `released` count chunks; the
/// preparing thread waits for a free buffer, SQLite's for a ready one. Each buffer is touched by
/// one thread at a time, handed over under the lock.
final class PreparedRowsHandover: @unchecked Sendable {
    let items: [UpstreamTransaction]
    let order: ArraySlice<Reconciler.Keyed>
    let ids: TransactionID
    let chunkCount: Int
    private let buffers = (0..<TransactionLoad.chunksAhead).map { _ in PreparedRows() }
    private let condition = Condition()
    private var prepared = 0, released = 0
    private var cancelled = false

    init(items: [UpstreamTransaction], order: ArraySlice<Reconciler.Keyed>, source: String) {
        self.items = items
        self.order = order
        ids = TransactionID(source: source)
        chunkCount = (order.count + TransactionLoad.rowsPerChunk - 1) / TransactionLoad.rowsPerChunk
    }

    /// The preparing thread: every chunk in turn, each once a buffer is free; it stops early once
    /// the load is cancelled.
    func prepareAll() {
        for chunk in 0..<chunkCount {
            condition.lock()
            while chunk - released >= buffers.count && !cancelled { condition.wait() }
            let stop = cancelled
            condition.unlock()
            if stop { return }
            let start = order.startIndex + chunk * TransactionLoad.rowsPerChunk
            buffers[chunk % buffers.count].fill(items, order[start..<min(start + TransactionLoad.rowsPerChunk, order.endIndex)], ids: ids)
            condition.lock()
            prepared = chunk + 1
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Chunk `chunk`'s rows, once prepared.
    func waitForChunk(_ chunk: Int) -> PreparedRows {
        condition.lock()
        while prepared <= chunk { condition.wait() }
        condition.unlock()
        return buffers[chunk % buffers.count]
    }

    /// Chunk `chunk` inserted: its buffer may be filled again.
    func release(_ chunk: Int) {
        condition.lock()
        released = chunk + 1
        condition.broadcast()
        condition.unlock()
    }

    /// How many chunks are prepared so far.
    var preparedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return prepared
    }

    /// No more chunks are wanted (the load ended, or failed): a waiting preparer stops.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
