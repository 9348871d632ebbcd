
/// A statement's row written straight into the output buffer as JSON or CSV: the text that
/// `JSONValue.object` and `CSVText.row` give for the same values, without a String per value,
/// which made a large export slow (figures: docs/performance.md).
package struct RowBytes {
    /// The columns written, by index, and their names.
    package let columns: [Int]
    /// Each column's `"name": ` for JSON, encoded once.
    private let keys: [[UInt8]]
    /// 0/1 columns written as false/true in JSON (the stale and pending flags).
    package let boolColumns: Set<Int>
    /// A column holding JSON, written into JSON as it is (a generic record).
    package var rawColumn: Int? = nil

    /// A row as `list --json` (and `export`, `search`, `cache serve`) gives it: every column,
    /// the stale and pending flags booleans, a record's JSON (`asRecords`) written into it as it is.
    package static func listRow(_ columns: [String], asRecords: Bool) -> RowBytes {
        RowBytes(names: columns, boolColumns: Set(["stale", "pending"].compactMap { columns.firstIndex(of: $0) }),
                 rawColumn: asRecords ? columns.firstIndex(of: "record") : nil)
    }

    package init(names: [String], columns: [Int]? = nil, boolColumns: Set<Int> = [], rawColumn: Int? = nil) {
        self.rawColumn = rawColumn
        self.columns = columns ?? Array(names.indices)
        keys = self.columns.map { column in
            var key: [UInt8] = []
            JSONBytes.string(names[column], into: &key)
            JSONBytes.literal(": ", into: &key)
            return key
        }
        self.boolColumns = boolColumns
    }

    package func json(_ row: Statement, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (position, column) in columns.enumerated() {
            if position > 0 { JSONBytes.literal(", ", into: &out) }
            out.append(contentsOf: keys[position])
            if boolColumns.contains(column) {
                JSONBytes.bool(row.int(column) != 0, into: &out)
                continue
            }
            if column == rawColumn, case let raw = row.text(column) ?? "null" {
                out.append(contentsOf: raw.utf8)
                continue
            }
            row.withColumn(column) { value in
                switch value {
                case .null: JSONBytes.literal("null", into: &out)
                case .integer(let number): JSONBytes.int(Int(number), into: &out)
                case .real(let number): JSONBytes.double(number, into: &out)
                case .text(let bytes): JSONBytes.string(bytes, into: &out)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// One RFC 4180 line: a field is quoted when it holds a comma, quote or line break.
    package func csv(_ row: Statement, into out: inout [UInt8]) {
        for (position, column) in columns.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            row.withColumn(column) { value in
                switch value {
                case .null: break
                case .integer(let number): JSONBytes.int(Int(number), into: &out)
                case .real(let number): JSONBytes.double(number, into: &out)
                case .text(let bytes): Self.csvField(bytes, into: &out)
                }
            }
        }
        out.append(UInt8(ascii: "\n"))
    }

    private static func csvField(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard bytes.contains(where: special) else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// A row as `cache serve`'s JSON gives it, whatever the kind: `{"key", "seen_at", "stale",
/// "pending", "record": {…}}` (`pending`: a local edit of it waits to reach the upstream), the record as upstream sent it (a json, csv or ndjson source's record as
/// stored; a joke's or transaction's fields, as the library decodes them), the key a string.
/// What ticks with the clock (`age_s`) is left out: it is `Date` minus `seen_at`.
package struct RowRecordBytes {
    /// The columns the cache adds to a kind's own fields (the rest of a flat row is the record).
    package static let bookkeeping: Set<String> = ["source", "seen_at", "age_s", "stale", "pending"]

    private let key: Int
    private let seenAt: Int?
    /// The stale flag's column.
    package let staleColumn: Int?
    /// The pending flag's column (kinds that cannot be edited have none: never pending).
    private let pendingColumn: Int?
    /// A record kept whole as JSON (`key, record, …`), written as it is.
    private let record: Int?
    /// Otherwise the kind's own columns, written as an object.
    private let fields: RowBytes

    /// For a statement's `columns`, as `CacheReader.forEachRow(asRecords: true)` gives them,
    /// keyed by `keyColumn` (the kind's page key: `key`, or a joke's or transaction's `id`).
    package init(_ columns: [String], keyColumn: String) {
        key = columns.firstIndex(of: keyColumn) ?? 0
        seenAt = columns.firstIndex(of: "seen_at")
        staleColumn = columns.firstIndex(of: "stale")
        pendingColumn = columns.firstIndex(of: "pending")
        record = columns.count > 1 && columns[0] == "key" && columns[1] == "record" ? 1 : nil
        fields = RowBytes(names: columns, columns: columns.indices.filter { !Self.bookkeeping.contains(columns[$0]) })
    }

    /// The row's `seen_at`, as stored.
    package func seenAt(_ row: Statement) -> String? { seenAt.flatMap { row.text($0) } }

    package func json(_ row: Statement, into out: inout [UInt8]) {
        JSONBytes.literal("{\"key\": ", into: &out)
        row.withColumn(key) { value in
            switch value {
            case .null: JSONBytes.literal("null", into: &out)
            case .integer(let number): JSONBytes.literal("\"", into: &out); JSONBytes.int(Int(number), into: &out); JSONBytes.literal("\"", into: &out)
            case .real(let number): JSONBytes.string(JSONValue.number(number), into: &out)
            case .text(let bytes): JSONBytes.string(bytes, into: &out)
            }
        }
        JSONBytes.literal(", \"seen_at\": ", into: &out)
        if let seenAt, let text = row.text(seenAt) { JSONBytes.string(text, into: &out) } else { JSONBytes.literal("null", into: &out) }
        JSONBytes.literal(", \"stale\": ", into: &out)
        JSONBytes.bool(staleColumn.map { row.int($0) != 0 } ?? false, into: &out)
        JSONBytes.literal(", \"pending\": ", into: &out)
        JSONBytes.bool(pendingColumn.map { row.int($0) != 0 } ?? false, into: &out)
        JSONBytes.literal(", \"record\": ", into: &out)
        if let record { out.append(contentsOf: (row.text(record) ?? "null").utf8) } else { fields.json(row, into: &out) }
        out.append(UInt8(ascii: "}"))
    }
}
