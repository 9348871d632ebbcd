/// A validated response, ready to reconcile. Nothing in it has been written yet.
public enum Payload: Sendable, Equatable {
    case account(UpstreamAccount)
    case jokes([UpstreamJoke])
    /// A generic source's records from every page, checked and keyed.
    case records(RecordSet)

    public var rowCount: Int {
        switch self {
        case .account(let account): account.transactions.count
        case .jokes(let jokes): jokes.count
        case .records(let set): set.records.count
        }
    }
}

public struct UpstreamAccount: Sendable, Equatable {
    public var name: String
    public var balance: Double
    public var transactions: [UpstreamTransaction]

    public init(name: String, balance: Double, transactions: [UpstreamTransaction]) {
        self.name = name
        self.balance = balance
        self.transactions = transactions
    }
}

public struct UpstreamTransaction: Sendable, Equatable {
    /// 0 is a credit; any other value a debit.
    public var type: Int
    public var vendor: String
    public var amount: Double
    /// Upstream's `yyyy-MM-dd HH:mm:ss`, stored as ISO 8601 UTC (`2026-11-01T08:15:14Z`).
    public var date: TransactionDate

    public init(type: Int, vendor: String, amount: Double, date: TransactionDate) {
        self.type = type
        self.vendor = vendor
        self.amount = amount
        self.date = date
    }
}

public struct UpstreamJoke: Sendable, Equatable {
    public var id: Int
    public var type: String
    public var setup: String
    public var punchline: String

    public init(id: Int, type: String, setup: String, punchline: String) {
        self.id = id
        self.type = type
        self.setup = setup
        self.punchline = punchline
    }
}

/// The records of every page of one sync, each key once.
public struct RecordSet: Sendable, Equatable {
    public var records: [UpstreamRecord] = []
    /// Top-level scalar fields, in the order first seen.
    public var fields: [String] = []
    private var index: [String: Int] = [:]
    private var fieldSet: Set<String> = []

    public init() {}

    /// Adds a page's records: a key seen on an earlier page must bring the same record.
    mutating func add(_ page: RecordPage, number: Int) throws(UpstreamError) {
        records.reserveCapacity(records.count + page.records.count)
        for record in page.records {
            if let earlier = index[record.key] {
                guard records[earlier].json == record.json else {
                    throw .badData("page \(number) repeats the key \(record.key) of an earlier page with different contents")
                }
                continue
            }
            index[record.key] = records.count
            records.append(record)
        }
        for field in page.fields where fieldSet.insert(field).inserted { fields.append(field) }
    }
}
