import OfflineCache

/// The cached data and what vouches for it, as text: every row of the data tables plus each
/// source's confirmation times. Two equal dumps mean the cache serves exactly the same rows
/// with the same staleness. (The run history is left out: a failed sync adds to it.)
func cacheDump(_ path: String) throws -> String {
    let db = try Connection(path: path, readOnly: true)
    var out = ""
    for (table, order) in [("accounts", "source"), ("transactions", "id"), ("jokes", "source, id"),
                           ("records", "source, key"), ("sync_state", "source")] {
        let columns = table == "sync_state" ? "source, confirmed_at, last_success_at" : "*"
        out += "-- \(table)\n"
        let rows = try db.query("SELECT \(columns) FROM \(table) ORDER BY \(order)") { row in
            (0..<row.columnCount).map { index -> String in
                switch row.value(index) {
                case .null: "NULL"
                case .int(let value): String(value)
                case .double(let value): String(value)
                case .text(let value): "'\(value)'"
                }
            }.joined(separator: "|")
        }
        out += rows.joined(separator: "\n") + "\n"
    }
    return out
}

/// Rows of one table as (column → text) maps, for targeted checks.
func rows(_ path: String, _ sql: String) throws -> [[String: String]] {
    let db = try Connection(path: path, readOnly: true)
    return try db.query(sql) { row in
        var values: [String: String] = [:]
        for index in 0..<row.columnCount {
            values[row.columnName(index)] = row.text(index) ?? "NULL"
        }
        return values
    }
}
