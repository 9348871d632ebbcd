import FoundationEssentials

/// One record of a generic JSON source, checked: its key and the record in canonical form.
public struct UpstreamRecord: Sendable, Equatable {
    /// The key fields' values: the value itself for one field (`42`, `abc`), a JSON array for
    /// several (`[42,"abc"]`).
    public var key: String
    /// The record as canonical JSON: object keys sorted, no whitespace, strings escaped one way.
    /// Two responses that differ only in key order or spacing give the same text.
    public var json: String

    public init(key: String, json: String) {
        self.key = key
        self.json = json
    }
}

/// The records of one page and what the page says about the next.
public struct RecordPage: Sendable, Equatable {
    public var records: [UpstreamRecord]
    /// The top-level fields holding a scalar (string, number, boolean), in the order first seen.
    public var fields: [String]
    /// With `next = .body`: the value found at that path (a URL or a cursor); nil at the end.
    public var next: String?
}

/// A JSON value as the generic decoder reads it. Numbers are kept as canonical text: an integer
/// as written, any other number as the shortest text of its double (`1.50` and `1.5` are the
/// same number, so are `2.0` and `2`, `262.06999999999999` and `262.07`).
indirect enum JSONNode {
    case null, bool(Bool), number(String), string(String), array([JSONNode])
    /// Keys in the order the response has them (a repeated key: the first wins).
    case object(keys: [String], values: [JSONNode])

    var isScalar: Bool {
        switch self {
        case .bool, .number, .string: true
        default: false
        }
    }

    /// The value at a path of object keys, if there is one.
    func at(_ path: JSONPath) -> JSONNode? {
        var node = self
        for key in path.keys {
            guard case .object(let keys, let values) = node, let index = keys.firstIndex(of: key) else { return nil }
            node = values[index]
        }
        return node
    }

    /// Canonical JSON: object keys sorted by their UTF-8 bytes, no whitespace.
    func write(into out: inout [UInt8]) {
        switch self {
        case .null: JSONBytes.literal("null", into: &out)
        case .bool(let value): JSONBytes.literal(value ? "true" : "false", into: &out)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): JSONBytes.string(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let keys, let values):
            out.append(UInt8(ascii: "{"))
            let order = keys.indices.sorted { keys[$0].utf8.lexicographicallyPrecedes(keys[$1].utf8) }
            for (position, index) in order.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.string(keys[index], into: &out)
                out.append(UInt8(ascii: ":"))
                values[index].write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    var canonical: String {
        var out: [UInt8] = []
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Reads one page of a generic source: the records at the layout's rows path, each checked for
/// its key, and the next page's URL or cursor when the body carries it.
enum RecordDecoder {
    static func decode(_ body: Data, layout: RecordLayout, page: Int = 1) throws(UpstreamError) -> RecordPage {
        let result: Result<RecordPage, JSONCursor.Failure> = body.withUnsafeBytes { raw in
            var reader = Reader(layout: layout, page: page)
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self))
            return Result { () throws(JSONCursor.Failure) in try reader.read(&cursor) }
        }
        switch result {
        case .success(let page): return page
        case .failure(let failure): throw .badData(failure.message)
        }
    }

    private struct Reader {
        let layout: RecordLayout
        let page: Int
        var records: [UpstreamRecord] = []
        var fields: [String] = []
        var fieldSet: Set<String> = []
        var next: String?
        var foundRows = false
        /// Key → the index of the record that had it, for duplicates.
        var seen: [String: Int] = [:]

        init(layout: RecordLayout, page: Int) {
            self.layout = layout
            self.page = page
        }

        var where_: String { page > 1 ? " on page \(page)" : "" }

        mutating func read(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> RecordPage {
            cursor.skipWhitespace()
            guard cursor.peek() != nil else { throw JSONCursor.Failure(message: "an empty body\(where_)") }
            try visit([], &cursor)
            try cursor.expectEnd()
            guard foundRows else {
                throw JSONCursor.Failure(message: "no records at \(layout.rows.description)\(where_)")
            }
            return RecordPage(records: records, fields: fields, next: next)
        }

        private var nextPath: [String]? {
            if case .body(let path)? = layout.next { return path.keys }
            return nil
        }

        /// Reads the value at `path`: the records, the next page, or an object on the way to them.
        mutating func visit(_ path: [String], _ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
            if path == layout.rows.keys {
                foundRows = true
                return try readRecords(&cursor)
            }
            if path == nextPath {
                return try readNext(&cursor)
            }
            let leadsOn = layout.rows.keys.starts(with: path) || (nextPath?.starts(with: path) ?? false)
            if leadsOn, cursor.peek() == UInt8(ascii: "{") {
                try cursor.readObject { cursor, key throws(JSONCursor.Failure) in
                    try self.visit(path + [key], &cursor)
                }
            } else {
                try cursor.skipValue()
            }
        }

        mutating func readNext(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
            switch cursor.peek() {
            case UInt8(ascii: "\""): next = try cursor.readStringToken()
            case UInt8(ascii: "n"): _ = try cursor.readNull()
            case .some(let byte) where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte):
                next = try Self.numberText(&cursor)  // a numeric cursor
            default:
                throw JSONCursor.Failure(message: "the next page at \(nextPath.map { JSONPath($0).description } ?? "")\(where_) is not a URL or cursor")
            }
            if next?.isEmpty == true { next = nil }
        }

        mutating func readRecords(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
            switch cursor.peek() {
            case UInt8(ascii: "["):
                try cursor.readArray { cursor, index throws(JSONCursor.Failure) in
                    guard cursor.peek() == UInt8(ascii: "{") else {
                        throw JSONCursor.Failure(message: "record \(index)\(where_) is not an object")
                    }
                    try self.add(Self.node(&cursor), index: index)
                }
            case UInt8(ascii: "{"):
                try add(Self.node(&cursor), index: 0)
            case .some(let byte):
                let kind = byte == UInt8(ascii: "\"") ? "a string" : byte == UInt8(ascii: "n") ? "null"
                    : byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") ? "a boolean" : "a number"
                throw JSONCursor.Failure(message: "--rows \(layout.rows.description) points at \(kind)\(where_), not at records")
            case nil:
                throw JSONCursor.syntaxError
            }
        }

        mutating func add(_ record: JSONNode, index: Int) throws(JSONCursor.Failure) {
            var parts: [JSONNode] = []
            for field in layout.key {
                guard let value = record.at(field), value.isScalar else {
                    throw JSONCursor.Failure(message: "record \(index)\(where_) has no key field \(field.dotted)"
                        + (record.at(field) == nil ? "" : " holding a string or number"))
                }
                parts.append(value)
            }
            let key: String
            if parts.count == 1, case .string(let text) = parts[0] {
                key = text
            } else if parts.count == 1 {
                key = parts[0].canonical
            } else {
                key = JSONNode.array(parts).canonical
            }
            let json = record.canonical
            if let first = seen[key] {
                // The same record twice is one record; two different ones under one key are not.
                if records[first].json != json {
                    throw JSONCursor.Failure(message: "records \(recordNumber(first)) and \(index)\(where_) have the same key (\(key)) and different contents")
                }
                return
            }
            seen[key] = records.count
            positions.append(index)
            records.append(UpstreamRecord(key: key, json: json))
            if case .object(let keys, let values) = record {
                for (name, value) in zip(keys, values) where value.isScalar && fieldSet.insert(name).inserted {
                    fields.append(name)
                }
            }
        }

        /// The response index of each kept record, for messages.
        var positions: [Int] = []
        func recordNumber(_ kept: Int) -> Int { positions[kept] }

        /// A value of any kind, as a node.
        static func node(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> JSONNode {
            switch cursor.peek() {
            case UInt8(ascii: "{"):
                var keys: [String] = [], values: [JSONNode] = []
                try cursor.readObject { cursor, key throws(JSONCursor.Failure) in
                    keys.append(key)
                    values.append(try node(&cursor))
                }
                return .object(keys: keys, values: values)
            case UInt8(ascii: "["):
                var items: [JSONNode] = []
                try cursor.readArray { cursor, _ throws(JSONCursor.Failure) in items.append(try node(&cursor)) }
                return .array(items)
            case UInt8(ascii: "\""):
                return .string(try cursor.readStringToken())
            case UInt8(ascii: "t"):
                try cursor.skipValue()
                return .bool(true)
            case UInt8(ascii: "f"):
                try cursor.skipValue()
                return .bool(false)
            case UInt8(ascii: "n"):
                _ = try cursor.readNull()
                return .null
            default:
                return .number(try numberText(&cursor))
            }
        }

        /// A number token, checked, as canonical text.
        static func numberText(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> String {
            cursor.skipWhitespace()
            let start = cursor.position
            let token = try cursor.readNumberToken()
            let text = UnsafeBufferPointer(rebasing: cursor.bytes[start..<cursor.position])
            if !text.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
                return String(decoding: text, as: UTF8.self)  // integers as written, any size
            }
            guard let value = token.double, value.isFinite else { return String(decoding: text, as: UTF8.self) }
            return JSONValue.number(value)
        }
    }
}

/// What changed between two versions of a record, field by field (top-level fields; a nested
/// value is compared and shown as canonical JSON). For `cache diff`.
public enum RecordDiff {
    public struct FieldChange: Sendable, Equatable {
        public var field: String
        /// The value as JSON text; nil where the field was absent.
        public var before: String?
        public var after: String?
    }

    public static func changes(before: String, after: String) -> [FieldChange] {
        let old = fields(before), new = fields(after)
        var names = old.map(\.0)
        for (name, _) in new where !names.contains(name) { names.append(name) }
        let oldValues = Dictionary(old, uniquingKeysWith: { first, _ in first })
        let newValues = Dictionary(new, uniquingKeysWith: { first, _ in first })
        return names.compactMap { name in
            oldValues[name] == newValues[name] ? nil : FieldChange(field: name, before: oldValues[name], after: newValues[name])
        }
    }

    /// A record's top-level fields and their values as canonical JSON, in order.
    public static func fields(_ json: String) -> [(String, String)] {
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

extension RecordDecoder {
    /// A value of any kind, as a node.
    static func node(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> JSONNode {
        try Reader.node(&cursor)
    }
}
