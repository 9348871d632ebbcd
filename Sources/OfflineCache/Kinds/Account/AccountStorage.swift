/// `accounts` (one header per source) and `transactions`, clustered by date and vendor.
struct AccountStorage: StorageDefinition {
    var rowTable: String { "transactions" }
    var cachedTables: [String] { ["accounts", "transactions"] }
    var rowNoun: String { "transactions" }
    var keepsRecords: Bool { false }

    /// A row's effective seen_at is the later of its own and its source's confirmed_at; it is
    /// stale once older than the source's TTL.
    var views: [ViewDefinition] {
        [
            ViewDefinition("cached_accounts", reads: ["accounts", "sources", "sync_state"], """
                SELECT source, name, balance, \(ViewDefinition.staleness)
                FROM (SELECT a.source, a.name, a.balance, s.ttl_s,
                             max(a.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                      FROM accounts a
                      JOIN sources s ON s.name = a.source
                      LEFT JOIN sync_state st ON st.source = a.source)
                """),
            ViewDefinition("cached_transactions", reads: ["transactions", "accounts", "sources", "sync_state"], """
                SELECT id, source, account, type, vendor, amount, date, ordinal, \(ViewDefinition.staleness)
                FROM (SELECT t.id, t.source, a.name AS account, t.type, t.vendor, t.amount, t.date, t.ordinal, s.ttl_s,
                             max(t.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                      FROM transactions t
                      JOIN sources s ON s.name = t.source
                      LEFT JOIN accounts a ON a.source = t.source
                      LEFT JOIN sync_state st ON st.source = t.source)
                """),
        ]
    }

    private static let columns = "id, source, account, type, vendor, amount, date, seen_at, age_s, stale"

    /// The account header and its transactions, newest first.
    func rows(_ db: Connection, source: String, staleOnly: Bool, limit: Int?) throws -> CachedRows {
        let account = try db.query("""
            SELECT source, name, balance, seen_at, age_s, stale FROM cached_accounts WHERE source = ?
            """, [.text(source)]) {
            CachedAccount(source: $0.text(0) ?? "", name: $0.text(1) ?? "", balance: $0.double(2),
                          seenAt: $0.text(3) ?? "", ageSeconds: $0.int(4), stale: $0.int(5) != 0)
        }.first
        let rows = try db.query(try rowsQuery(db, source: source, staleOnly: staleOnly, asRecords: false),
                                [.text(source), .int(Int64(limit ?? -1))]) {
            CachedTransaction(id: $0.text(0) ?? "", source: $0.text(1) ?? "", account: $0.text(2),
                              type: $0.int(3), vendor: $0.text(4) ?? "", amount: $0.double(5),
                              date: $0.text(6) ?? "", seenAt: $0.text(7) ?? "", ageSeconds: $0.int(8),
                              stale: $0.int(9) != 0)
        }
        return .account(account, rows)
    }

    func rowsQuery(_ db: Connection, source: String, staleOnly: Bool, asRecords: Bool) throws -> String {
        "SELECT \(Self.columns) FROM cached_transactions WHERE source = ?1 \(staleOnly ? "AND stale = 1" : "") ORDER BY date DESC, vendor, ordinal LIMIT ?2"
    }

    func viewColumns(_ db: Connection, source: String) throws -> [String] {
        Self.columns.split(separator: ", ").map(String.init)
    }
}

/// A cached transaction as the `cached_transactions` view presents it.
///
/// ```swift
/// if case .account(_, let rows) = try cache.rows(of: "bank") {
///     for row in rows { print(row.date, row.vendor, row.isCredit ? "+" : "-", row.amount, row.stale ? "(stale)" : "") }
/// }
/// ```
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

/// A cached account header as the `cached_accounts` view presents it.
///
/// ```swift
/// if case .account(let header?, _) = try cache.rows(of: "bank") { print(header.name, header.balance) }
/// ```
public struct CachedAccount: Sendable, Equatable {
    public var source: String
    public var name: String
    public var balance: Double
    public var seenAt: String
    public var ageSeconds: Int
    public var stale: Bool
}
