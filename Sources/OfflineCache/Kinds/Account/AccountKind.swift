import FoundationEssentials

/// An account: a name, a balance and its transactions, in a `{status, message, body}` envelope.
/// Each response is the whole account (`replace`).
struct AccountKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var storage: RowStorage { .account }
    var layoutOptions: [String] { [] }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        try PayloadDecoder.decode(bodies[0], shape: .account, deadline: deadline)
    }

    /// A row's effective seen_at is the later of its own and its source's confirmed_at; it is
    /// stale once older than the source's TTL.
    static var views: [ViewDefinition] {
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
}
