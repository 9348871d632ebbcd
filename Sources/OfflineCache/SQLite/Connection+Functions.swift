import CSQLite

/// SQL functions of this project's own, on every connection it opens.
extension Connection {
    /// `cache_strings(json)`: every string value in a JSON text (not the keys), in order,
    /// separated by spaces; NULL when it has none. What a record's search document holds
    /// (`RecordStorage.search`). SQLite's `json_tree` gives the same values, but took longer than
    /// the records' whole first sync without the index (figures: docs/performance.md).
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

        // `cache_digest(key, text)`, an aggregate: see `DocumentDigest`.
        sqlite3_create_function_v2(handle, "cache_digest", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil, nil,
                                   { context, _, arguments in
            // A NULL text is no document; a text SQLite cannot give (out of memory) is an error,
            // not a document left out.
            guard let arguments, let value = arguments[1], sqlite3_value_type(value) != SQLITE_NULL else { return }
            guard let text = sqlite3_value_text(value) else { return sqlite3_result_error_nomem(context) }
            let textCount = Int(sqlite3_value_bytes(value))
            let key = arguments[0].flatMap(sqlite3_value_text)
            // A NULL key counts as length -1, so it differs from an empty one.
            let keyCount = key == nil ? -1 : Int(sqlite3_value_bytes(arguments[0]))
            guard let digest = sqlite3_aggregate_context(context, Int32(MemoryLayout<DocumentDigest>.size))?
                .assumingMemoryBound(to: DocumentDigest.self) else { return sqlite3_result_error_nomem(context) }
            var hasher = Hasher()
            hasher.combine(keyCount)
            hasher.combine(bytes: UnsafeRawBufferPointer(start: key, count: max(keyCount, 0)))
            hasher.combine(bytes: UnsafeRawBufferPointer(start: text, count: textCount))
            digest.pointee.count &+= 1
            digest.pointee.sum &+= UInt64(bitPattern: Int64(hasher.finalize()))
        }, { context in
            let digest = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: DocumentDigest.self).pointee
            sqlite3_result_text(context, "\(digest?.count ?? 0):\(digest?.sum ?? 0)", -1, csqlite_transient)
        }, nil)
    }
}

/// `cache_digest(key, text)`: a digest of a set of documents, whatever their order: how many
/// there are (a NULL text is no document, as `search_docs` keeps none) and the sum of a hash
/// of each one's key and text. Two sets with equal digests are the same set but by a chance of
/// about 2⁻⁶⁴. The hash is seeded anew in each process (Swift's `Hasher`): digests are compared
/// only within one.
private struct DocumentDigest {
    var count: UInt64
    var sum: UInt64
}
