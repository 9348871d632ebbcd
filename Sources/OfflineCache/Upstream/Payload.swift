/// A validated response, ready to reconcile. Nothing in it has been written yet.
public enum Payload: Sendable, Equatable {
    case account(UpstreamAccount)
    case jokes([UpstreamJoke])

    public var rowCount: Int {
        switch self {
        case .account(let account): account.transactions.count
        case .jokes(let jokes): jokes.count
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
