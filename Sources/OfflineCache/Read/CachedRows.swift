/// A cached transaction as the `cached_transactions` view presents it.
public struct CachedTransaction: Sendable, Equatable {
    public var id: String
    public var source: String
    public var account: String?
    public var type: Int
    public var vendor: String
    public var amount: Double
    public var date: String
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool

    /// Type 0 is a credit; any other type a debit.
    public var isCredit: Bool { type == 0 }
}

/// A cached joke as the `cached_jokes` view presents it.
public struct CachedJoke: Sendable, Equatable {
    public var id: Int
    public var type: String
    public var setup: String
    public var punchline: String
    public var source: String
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool
}

/// A cached account header as the `cached_accounts` view presents it.
public struct CachedAccount: Sendable, Equatable {
    public var source: String
    public var name: String
    public var balance: Double
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool
}

/// A generic source's cached record: its key, the record's top-level fields the source's view
/// has columns for (as text; nil where the record lacks one), and the record itself.
public struct CachedRecord: Sendable, Equatable {
    public var key: String
    public var fields: [String?]
    /// Canonical JSON.
    public var record: String
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool
}

/// What the cache holds for one source.
public enum CachedRows: Sendable, Equatable {
    case account(CachedAccount?, [CachedTransaction])
    case jokes([CachedJoke])
    /// The view's field columns, in order, and the records, by key.
    case records(columns: [String], [CachedRecord])

    public var count: Int {
        switch self {
        case .account(_, let rows): rows.count
        case .jokes(let rows): rows.count
        case .records(_, let rows): rows.count
        }
    }
}

/// One source's state, as `cache status` shows it.
public struct SourceStatus: Sendable {
    public var source: Source
    public var rows: Int
    public var staleRows: Int
    /// Never synced, or the last success is older than the TTL.
    public var stale: Bool
    public var lastSuccessAt: String?
    public var lastAttemptAt: String?
    public var lastOutcome: String?
    public var lastError: String?
    public var nextAttemptAt: String?
    /// Seconds since the last success.
    public var ageSeconds: Int?
}
