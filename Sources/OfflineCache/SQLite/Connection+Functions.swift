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
            // Written straight into memory that SQLite then owns and frees: the result is not copied.
            let json = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
            guard let out = sqlite3_malloc64(UInt64(max(json.count, 1)))?.assumingMemoryBound(to: UInt8.self) else {
                return sqlite3_result_error_nomem(context)
            }
            guard let count = JSONStrings.write(json, to: out) else {
                sqlite3_free(out)
                return sqlite3_result_null(context)
            }
            // An empty result still has an address, so "" comes back as text, not NULL.
            sqlite3_result_text64(context, out, UInt64(count), { sqlite3_free($0) }, UInt8(SQLITE_UTF8))
        }, nil, nil, nil)
    }
}
