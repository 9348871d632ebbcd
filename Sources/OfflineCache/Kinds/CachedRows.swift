/// What the cache holds for one source, shaped by its kind.
///
/// ```swift
/// switch try cache.rows(of: "bank", limit: 20) {
/// case .account(let header, let transactions): print(header?.balance ?? 0, transactions.count)
/// case .jokes(let jokes): print(jokes.map(\.setup))
/// case .records(let columns, let records): print(columns, records.map(\.key))
/// }
/// ```
package enum CachedRows: Sendable, Equatable {
    case account(CachedAccount?, [CachedTransaction])
    case jokes([CachedJoke])
    /// The view's field columns, in order, and the records, by key.
    case records(columns: [String], [CachedRecord])

    /// How many rows: transactions, jokes or records.
    package var count: Int {
        switch self {
        case .account(_, let rows): rows.count
        case .jokes(let rows): rows.count
        case .records(_, let rows): rows.count
        }
    }

    /// How long ago upstream last confirmed each row, in seconds.
    package var ages: [Int] {
        switch self {
        case .account(_, let rows): rows.map(\.ageSeconds)
        case .jokes(let rows): rows.map(\.ageSeconds)
        case .records(_, let rows): rows.map(\.ageSeconds)
        }
    }

    /// The rows whose ids are among `ids` (the account's header left out).
    package func keeping(_ ids: Set<String>) -> CachedRows {
        switch self {
        case .account(_, let rows): .account(nil, rows.filter { ids.contains($0.id) })
        case .jokes(let rows): .jokes(rows.filter { ids.contains(String($0.id)) })
        case .records(let columns, let rows): .records(columns: columns, rows.filter { ids.contains($0.key) })
        }
    }

    /// Each row's id: a transaction's id, a joke's id as text, a record's key.
    package var ids: [String] {
        switch self {
        case .account(_, let rows): rows.map(\.id)
        case .jokes(let rows): rows.map { String($0.id) }
        case .records(_, let rows): rows.map(\.key)
        }
    }
}
