import FoundationEssentials

/// What changed between two versions of a record, field by field (top-level fields; a nested
/// value is compared and shown as canonical JSON). For `cache diff`.
package enum RecordDiff {
    package struct FieldChange: Sendable, Equatable {
        package var field: String
        /// The value as JSON text; nil where the field was absent.
        package var before: String?
        package var after: String?
    }

    package static func changes(before: String, after: String) -> [FieldChange] {
        // Field names by their bytes (ExactText), as the record keeps them apart.
        let old = fields(before), new = fields(after)
        var names = old.map { ExactText($0.0) }
        var named = Set(names)
        for (name, _) in new where named.insert(ExactText(name)).inserted { names.append(ExactText(name)) }
        let oldValues = Dictionary(old.map { (ExactText($0.0), $0.1) }, uniquingKeysWith: { first, _ in first })
        let newValues = Dictionary(new.map { (ExactText($0.0), $0.1) }, uniquingKeysWith: { first, _ in first })
        return names.compactMap { name in
            oldValues[name] == newValues[name] ? nil : FieldChange(field: name.text, before: oldValues[name], after: newValues[name])
        }
    }

    /// A record's top-level fields and their values as canonical JSON, in order.
    package static func fields(_ json: String) -> [(String, String)] {
        var bytes = Array(json.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = JSONCursor(UnsafeBufferPointer(buffer))
            var fields: [(String, String)] = []
            do {
                try cursor.readObject { cursor, key throws(JSONCursor.Failure) in
                    fields.append((key, try RecordDecoder.node(&cursor).canonical))
                }
            } catch {
                return []
            }
            return fields
        }
    }
}

extension RecordDiff {
    /// A canonical JSON string's text.
    static func unquote(_ json: [UInt8]) -> String? {
        json.withUnsafeBufferPointer { buffer in
            var cursor = JSONCursor(buffer)
            return try? cursor.readStringToken()
        }
    }
}
