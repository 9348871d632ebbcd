/// A validated response, ready to reconcile. Nothing in it has been written yet.
package enum Payload: Sendable, Equatable {
    case account(UpstreamAccount)
    case jokes([UpstreamJoke])
    /// A generic source's records from every page, checked and keyed.
    case records(RecordSet)

    package var rowCount: Int {
        switch self {
        case .account(let account): account.transactions.count
        case .jokes(let jokes): jokes.count
        case .records(let set): set.records.count
        }
    }
}

package struct UpstreamAccount: Sendable, Equatable {
    package var name: String
    package var balance: Double
    package var transactions: [UpstreamTransaction]

    package init(name: String, balance: Double, transactions: [UpstreamTransaction]) {
        self.name = name
        self.balance = balance
        self.transactions = transactions
    }
}

package struct UpstreamTransaction: Sendable, Equatable {
    /// 0 is a credit; any other value a debit.
    package var type: Int
    package var vendor: String
    package var amount: Double
    /// Upstream's `yyyy-MM-dd HH:mm:ss`, stored as ISO 8601 UTC (`2026-11-01T08:15:14Z`).
    package var date: TransactionDate

    package init(type: Int, vendor: String, amount: Double, date: TransactionDate) {
        self.type = type
        self.vendor = vendor
        self.amount = amount
        self.date = date
    }
}

package struct UpstreamJoke: Sendable, Equatable {
    package var id: Int
    package var type: String
    package var setup: String
    package var punchline: String

    package init(id: Int, type: String, setup: String, punchline: String) {
        self.id = id
        self.type = type
        self.setup = setup
        self.punchline = punchline
    }
}

/// The records of every page of one sync, each key once, in key order (the table's).
package struct RecordSet: Sendable, Equatable {
    package private(set) var records = RecordArena()
    /// Top-level scalar fields, in the order first seen.
    package private(set) var fields: [String] = []
    /// Nested objects' scalars and top-level lists, in the order first seen.
    package private(set) var nested = NestedShapes()
    /// Each page's first record and its records' indexes in the response, for messages.
    private var pages: [(first: Int, positions: [Int]?)] = []
    private var fieldSet: Set<ExactText> = []
    /// Records that came more than once, the same each time (a page overlapping the one before,
    /// a repeated row): each is cached once, and the sync says how many were.
    package private(set) var repeats = 0

    /// Record `index` as messages name it: its index in its page's response, and the page.
    private func origin(_ index: Int) -> String {
        let page = pages.lastIndex { $0.first <= index } ?? 0
        let position = pages[page].positions?[index - pages[page].first] ?? index - pages[page].first
        return pages.count > 1 ? "\(position) on page \(page + 1)" : "\(position)"
    }

    package static func == (a: RecordSet, b: RecordSet) -> Bool { a.records == b.records && a.fields == b.fields && a.nested == b.nested }

    package init() {}

    mutating func add(_ page: RecordPage, number: Int) {
        pages.append((records.count, page.positions))
        records.append(page.records)
        repeats += page.repeats
        for field in page.fields where fieldSet.insert(ExactText(field)).inserted { fields.append(field) }
        nested.merge(page.nested)
    }

    /// Sorts the records by key (their bytes, as SQLite compares text) and checks each key is
    /// one record: the same record twice is kept once; two different ones are bad data.
    mutating func finish() throws(UpstreamError) {
        // Sorted and thinned in place, taken out of the arena so that this is their only copy:
        // a sorted copy beside them was the peak of a first sync's memory.
        var spans = records.spans
        records.spans = []
        var repeated = 0
        let failure: UpstreamError? = records.bytes.withUnsafeBufferPointer { bytes in
            func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }
            func order(_ a: Range<Int>, _ b: Range<Int>) -> Int32 { compareBytes(bytes, a, b) }
            // Records of one key in response order: their texts were written in that order.
            spans.sort { a, b in
                let compared = order(a.key, b.key)
                return compared == 0 ? a.start < b.start : compared < 0
            }
            // Checked before any is dropped, so a failure can count each record's index in the
            // response over all of them: how many texts were written before its own.
            func response(_ span: RecordArena.Span) -> Int { spans.count { $0.start < span.start } }
            var first = 0
            for index in spans.indices.dropFirst() {
                guard order(spans[first].key, spans[index].key) == 0 else { first = index; continue }
                guard slice(spans[first].json).elementsEqual(slice(spans[index].json)) else {
                    return .badData("records \(origin(response(spans[first]))) and \(origin(response(spans[index]))) have the same key"
                                    + " (\(String(decoding: slice(spans[index].key), as: UTF8.self))) and different contents")
                }
                repeated += 1
            }
            if repeated > 0 {
                var kept = 0
                for index in spans.indices where kept == 0 || order(spans[kept - 1].key, spans[index].key) != 0 {
                    spans[kept] = spans[index]
                    kept += 1
                }
                spans.removeLast(spans.count - kept)
            }
            return nil
        }
        records.spans = spans
        if let failure { throw failure }
        repeats += repeated
        pages = []
    }
}
