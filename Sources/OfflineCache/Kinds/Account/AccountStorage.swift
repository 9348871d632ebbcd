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
    func rows(_ db: Connection, _ selection: RowSelection) throws -> CachedRows {
        // The header whatever the rows' filters: a search's document is a vendor, and --stale picks transactions.
        var header = RowSelection(source: selection.source, asOf: selection.asOf)
        header.limit = 1
        let (with, body) = select("source, name, balance, seen_at, age_s, stale", from: "cached_accounts", header, orderBy: "source")
        let account = try db.query(with + body, [.text(selection.source), .int(1)]) {
            CachedAccount(source: $0.text(0) ?? "", name: $0.text(1) ?? "", balance: $0.double(2),
                          seenAt: $0.text(3) ?? "", ageSeconds: $0.int(4), stale: $0.int(5) != 0)
        }.first
        let rows = try db.query(try rowsQuery(db, selection, asRecords: false),
                                [.text(selection.source), .int(Int64(selection.limit ?? -1))]) {
            CachedTransaction(id: $0.text(0) ?? "", source: $0.text(1) ?? "", account: $0.text(2),
                              type: $0.int(3), vendor: $0.text(4) ?? "", amount: $0.double(5),
                              date: $0.text(6) ?? "", seenAt: $0.text(7) ?? "", ageSeconds: $0.int(8),
                              stale: $0.int(9) != 0)
        }
        return .account(account, rows)
    }

    func rowsQuery(_ db: Connection, _ selection: RowSelection, asRecords: Bool) throws -> String {
        // Transactions back from the log have no ordinal, so they can tie: the id settles them,
        // alike for a page and a whole list.
        let orderBy = selection.asOf == nil ? "date DESC, vendor, ordinal" : "date DESC, vendor, ordinal, id"
        let (with, body) = select(Self.columns, from: "cached_transactions", selection, orderBy: orderBy)
        return with + body
    }

    var loggedHeader: (kind: String, table: String, fields: String)? { ("account", "accounts", "json_object('name', name, 'balance', balance)") }

    var loggedAs: (kind: String, key: String, fields: String) { ("transaction", "id", "json_object('date', date, 'vendor', vendor, 'type', type, 'amount', amount)") }

    /// The header and the transactions as they were; a transaction back from the change log has
    /// no ordinal (it orders repeats of one date and vendor), so it sorts first among them (by
    /// id between such rows: see `rowsQuery`). Its date and vendor are read as the index
    /// `changes_by_transaction_order` (migration 24) reads them, so a page as of a moment reads
    /// the log's rows in `list`'s order, sorting only the ties.
    func past(_ rows: PastRows) -> String {
        """
        \(rows.view("cached_accounts", columns: "source, name, balance", kind: "account", table: "accounts", key: "r.source",
                    current: "r.source, r.name, r.balance", restored: "c.source, c.before ->> '$.name' AS name, c.before ->> '$.balance' AS balance")),
        past_account AS (SELECT name FROM cached_accounts_now UNION ALL SELECT name FROM cached_accounts_log),
        \(rows.view("cached_transactions", columns: "id, source, account, type, vendor, amount, date, ordinal", kind: loggedAs.kind,
                    table: "transactions", key: "r.id",
                    current: "r.id, r.source, (SELECT name FROM past_account) AS account, r.type, r.vendor, r.amount, r.date, r.ordinal",
                    restored: "c.row_id AS id, c.source, (SELECT name FROM past_account) AS account, c.before ->> '$.type' AS type, "
                              + "json_extract(c.before, '$.vendor') AS vendor, c.before ->> '$.amount' AS amount, "
                              + "json_extract(c.before, '$.date') AS date, NULL AS ordinal"))
        """
    }

    var pageKey: String { "id" }

    /// One document per vendor, its name: its transactions are the hits.
    ///
    /// A vendor's document changes only when its first transaction comes or its last one goes,
    /// so a change touches it only then: never an update (the vendor is part of a transaction's
    /// key), and an insert only for a vendor without a document. Finding the touched vendors'
    /// documents reads the source's transactions once (there is no index by vendor), which a sync
    /// of updates to known vendors, the usual one, no longer pays (figures: docs/performance.md).
    var search: SearchDocuments {
        SearchDocuments(changedDocument: """
            CASE WHEN c.change = 'updated' THEN NULL
                 WHEN c.change = 'inserted' AND EXISTS (SELECT 1 FROM search_docs d WHERE d.source = c.source AND d.doc = c.after ->> '$.vendor') THEN NULL
                 ELSE coalesce(c.after, c.before) ->> '$.vendor' END
            """, column: "vendor", indexed: ["vendor"]) { only in
            """
            SELECT DISTINCT vendor AS doc, vendor AS text FROM transactions
            WHERE source = ?1\(only ? " AND vendor IN (SELECT value FROM json_each(?2))" : "")
            """
        }
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
package struct CachedTransaction: Sendable, Equatable {
    /// The transaction's id (upstream's, or one made from its fields).
    package var id: String
    /// The source it was cached from.
    package var source: String
    /// The account it belongs to, when upstream names one.
    package var account: String?
    /// 0 for a credit, 1 for a debit.
    package var type: Int
    /// Who it was paid to or received from.
    package var vendor: String
    /// The amount, without a sign (`type` says which way).
    package var amount: Double
    /// When it happened, as stored.
    package var date: String
    /// When upstream last confirmed it (ISO 8601, UTC).
    package var seenAt: String
    /// How long ago that was, when it was read.
    package var ageSeconds: Int
    /// Upstream has not confirmed it within the TTL.
    package var stale: Bool

    /// Type 0 is a credit; any other type a debit.
    package var isCredit: Bool { type == 0 }
}

/// A cached account header as the `cached_accounts` view presents it.
///
/// ```swift
/// if case .account(let header?, _) = try cache.rows(of: "bank") { print(header.name, header.balance) }
/// ```
package struct CachedAccount: Sendable, Equatable {
    /// The source it was cached from.
    package var source: String
    /// The account holder's name.
    package var name: String
    /// The current balance.
    package var balance: Double
    /// When upstream last confirmed it (ISO 8601, UTC).
    package var seenAt: String
    /// How long ago that was, when it was read.
    package var ageSeconds: Int
    /// Upstream has not confirmed it within the TTL.
    package var stale: Bool
}
