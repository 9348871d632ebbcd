import CSQLite

/// SQL functions of this project's own, on every connection it opens.
extension Connection {
    /// `cache_strings(json)`: every string value in a JSON text (not the keys), in order,
    /// separated by spaces; NULL when it has none. What a record's search document holds
    /// (`RecordStorage.search`). SQLite's `json_tree` gives the same values, but took 5.0 s for a
    /// million records: more than their whole first sync without the index (4 s).
    func addFunctions() {
        sqlite3_create_function_v2(handle, "cache_strings", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
                                   { context, _, arguments in
            guard let value = arguments?[0], let text = sqlite3_value_text(value) else {
                return sqlite3_result_null(context)
            }
            guard let strings = JSONStrings.values(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))) else {
                return sqlite3_result_null(context)
            }
            // An empty buffer may have no address, and a NULL pointer would give NULL.
            guard !strings.isEmpty else { return sqlite3_result_text(context, "", 0, csqlite_transient) }
            strings.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    sqlite3_result_text(context, $0.baseAddress, Int32($0.count), csqlite_transient)
                }
            }
        }, nil, nil, nil)
    }
}
