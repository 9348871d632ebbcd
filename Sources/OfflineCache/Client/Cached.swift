import FoundationEssentials

/// One cached row decoded into an app's own type, with what the cache knows about it: its key,
/// whether upstream has confirmed it within the source's TTL, and when it last did.
///
/// ```swift
/// struct Item: Decodable { var id: Int; var name: String }
/// let items = try cache.rows(of: "items", as: Item.self, limit: 50)
/// for row in items.rows { print(row.value.name, row.isStale ? "(stale)" : "") }
/// ```
public struct Cached<Value> {
    /// The row as the app's type.
    public var value: Value
    /// The row's key: a json, csv or ndjson record's key, a joke's id, a transaction's id.
    public var key: String
    /// Upstream has not confirmed the row within the source's TTL.
    public var isStale: Bool
    /// When upstream last confirmed the row (a sync that carried it).
    public var seenAt: Date
    /// How long ago that was, when the row was read.
    public var age: Duration
    /// A local edit of the row (`cache edit`, or a write route of `cache serve`) waits to reach
    /// the upstream: `value` shows it (a row being removed shows its last version).
    public var isPending = false
}

extension Cached: Sendable where Value: Sendable {}
extension Cached: Equatable where Value: Equatable {}

/// The rows of a read, each decoded, and the rows that did not decode, by key: one bad record
/// does not cost the others.
public struct DecodedRows<Value> {
    /// The rows that decoded, in the source's order.
    public var rows: [Cached<Value>]
    /// The rows that did not, with why.
    public var failures: [UndecodableRow]
}

extension DecodedRows: Sendable where Value: Sendable {}

/// A cached row that did not decode into the type asked for.
public struct UndecodableRow: Error, Sendable, CustomStringConvertible {
    /// The row's key.
    public var key: String
    /// What the decoder said.
    public var reason: String

    public var description: String { "the row '\(key)' does not decode: \(reason)" }
}

extension Source.Kind {
    /// A joke as the jokes kind keeps it: `cache.rows(of: "jokes", as: Source.Kind.Joke.self)`.
    public struct Joke: Codable, Sendable, Equatable {
        /// The joke's id upstream.
        public var id: Int
        /// Its category (`general`, `programming`, …).
        public var type: String
        /// The question.
        public var setup: String
        /// The answer.
        public var punchline: String
    }
}

extension Source.Kind {
    /// A transaction as the account kind keeps it: `cache.rows(of: "bank", as: Source.Kind.AccountTransaction.self)`.
    public struct AccountTransaction: Codable, Sendable, Equatable {
        /// The transaction's id.
        public var id: String
        /// The account it belongs to, when upstream names one.
        public var account: String?
        /// 0 for a credit, 1 for a debit.
        public var type: Int
        /// Who it was paid to or received from.
        public var vendor: String
        /// The amount, without a sign (`type` says which way).
        public var amount: Double
        /// The day, as upstream writes it (`2026-11-29`).
        public var date: String

        /// Money in.
        public var isCredit: Bool { type == 0 }
    }

    /// An account's holder and balance, what a screen shows above its transactions
    /// (`SourceModel.account`, `Cache.account(of:)`).
    public struct Account: Codable, Sendable, Equatable {
        /// The account holder's name.
        public var name: String
        /// The current balance.
        public var balance: Double
    }
}

extension CacheReader {
    /// The source's rows, each decoded into `type` from its JSON: what `Cache.rows(of:as:)`,
    /// the screen's model and the loading states read.
    func decoded<Value: Decodable>(_ source: Source, as type: Value.Type, staleOnly: Bool = false, limit: Int?,
                                   asOf: String? = nil) throws -> DecodedRows<Value> {
        try DecodedRows.decoding(as: type) { add in
            try forEachRow(of: source, staleOnly: staleOnly, limit: limit, asRecords: true, asOf: asOf) { add(CachedRowText($0, $1)) }
        }
    }

    /// An account source's header, as a cached row keyed by the source's name; nil for other
    /// kinds, and before the first sync.
    package func accountHeader(of source: Source) throws -> Cached<Source.Kind.Account>? {
        guard source.kind.hasHeader, case .account(let header?, _) = try rows(of: source, limit: 0) else { return nil }
        return Cached(value: .init(name: header.name, balance: header.balance), key: source.name, isStale: header.stale,
                      seenAt: Timestamp.parse(header.seenAt) ?? Date(timeIntervalSince1970: 0), age: .seconds(header.ageSeconds))
    }
}

/// A row as the reader steps over it, before it is decoded: its key, its JSON, and what the
/// cache knows of it.
struct CachedRowText {
    var key: String
    var json: String
    var seenAt: Date
    var ageSeconds: Int
    var stale: Bool
    var pending: Bool

    /// The columns the cache adds to a kind's own fields.
    private static let bookkeeping = RowRecordBytes.bookkeeping

    /// From a row `CacheReader.forEachRow(asRecords: true)` gives: `key, record, …` for records
    /// (the record as its JSON), the view's columns for jokes and transactions (made a JSON
    /// object of the kind's fields).
    init(_ columns: [String], _ row: Statement) {
        let index = { (name: String) in columns.firstIndex(of: name) }
        key = switch row.value(0) {
        case .int(let number): String(number)
        case .text(let text): text
        case .double(let number): JSONValue.number(number)
        case .null: ""
        }
        if columns.count > 1, columns[0] == "key", columns[1] == "record" {
            json = row.text(1) ?? "null"
        } else {
            json = JSONValue.object(columns.indices.filter { !Self.bookkeeping.contains(columns[$0]) }.map { (columns[$0], JSONValue(row.value($0))) }).compact
        }
        seenAt = index("seen_at").flatMap(row.text).flatMap(Timestamp.parse) ?? Date(timeIntervalSince1970: 0)
        ageSeconds = index("age_s").map(row.int) ?? 0
        stale = index("stale").map { row.int($0) != 0 } ?? false
        pending = index("pending").map { row.int($0) != 0 } ?? false
    }

    func decoded<Value: Decodable>(as type: Value.Type, _ decoder: JSONDecoder) -> Result<Cached<Value>, UndecodableRow> {
        // Rows as `String` are their JSON, as text: what a tool that shows any source takes (a
        // row is an object, which no string decodes from).
        if let text = json as? Value {
            return .success(Cached(value: text, key: key, isStale: stale, seenAt: seenAt, age: .seconds(ageSeconds), isPending: pending))
        }
        do {
            let value = try decoder.decode(type, from: Data(json.utf8))
            return .success(Cached(value: value, key: key, isStale: stale, seenAt: seenAt, age: .seconds(ageSeconds), isPending: pending))
        } catch {
            return .failure(UndecodableRow(key: key, reason: DecodingReason.of(error, json: json) { changed in
                do { _ = try decoder.decode(type, from: Data(changed.utf8)); return nil } catch { return error }
            }))
        }
    }
}

extension DecodedRows {
    /// Decodes each row `step` hands over.
    static func decoding(as type: Value.Type, _ step: ((CachedRowText) -> Void) throws -> Void) rethrows -> DecodedRows where Value: Decodable {
        let decoder = JSONDecoder()
        var decoded = DecodedRows(rows: [], failures: [])
        try step { row in
            switch row.decoded(as: type, decoder) {
            case .success(let cached): decoded.rows.append(cached)
            case .failure(let failure): decoded.failures.append(failure)
            }
        }
        return decoded
    }
}
