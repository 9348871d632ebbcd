import FoundationEssentials

/// Reads one page of a generic source: the records at the layout's rows path, each checked for
/// its key, and the next page's URL or cursor when the body carries it.
enum RecordDecoder {
    /// The value at the layout's next path (a URL or a cursor), reading nothing else: for
    /// following pages before deciding whether their records need decoding.
    static func next(_ body: Data, layout: RecordLayout, page: Int, deadline: DecodeDeadline? = nil) throws(UpstreamError) -> String? {
        guard layout.bodyValuePath != nil else { return nil }
        var skipping = layout
        skipping.rows = JSONPath(["\u{0}skip"])  // a path no response has: records are not read
        let result: Result<String?, JSONCursor.Failure> = body.withUnsafeBytes { raw in
            var reader = Reader(layout: skipping, page: page)
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self), deadline: deadline?.instant)
            return Result { () throws(JSONCursor.Failure) in
                cursor.skipWhitespace()
                try reader.visit([], &cursor)
                try cursor.expectEnd()
                return reader.next
            }
        }
        switch result {
        case .success(let next): return next
        case .failure(let failure): throw failure.timedOut ? deadline!.error : .badData(failure.message)
        }
    }

    /// With `release`, the body is the decoder's to consume: its records are given back as they
    /// are read (a failure ends the reading there, and nothing reads them again).
    /// With `lines`, the body is JSON Lines (ndjson): one record per line, read where it lies.
    static func decode(_ body: Data, layout: RecordLayout, page: Int = 1, deadline: DecodeDeadline? = nil,
                       release: BodyRelease? = nil, lines: Bool = false) throws(UpstreamError) -> RecordPage {
        let result: Result<RecordPage, JSONCursor.Failure> = body.withUnsafeBytes { raw in
            var reader = Reader(layout: layout, page: page)
            // The canonical records take about the body's size: reserved at once, the arena is
            // never copied to grow (a copy would briefly hold it twice).
            reader.records.bytes.reserveCapacity(raw.count + raw.count / 16)
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self), deadline: deadline?.instant)
            cursor.release = release
            // A record naming a field twice is bad data: the next tool (jq, JavaScript, Python)
            // would read the last value where the first was kept.
            cursor.refusesRepeatedKeys = true
            return Result { () throws(JSONCursor.Failure) in try lines ? reader.readLines(&cursor) : reader.read(&cursor) }
        }
        switch result {
        case .success(let page): return page
        case .failure(let failure): throw failure.timedOut ? deadline!.error : .badData(failure.message)
        }
    }

    private struct Reader {
        let layout: RecordLayout
        let page: Int
        var records = RecordArena()
        var fields: [String] = []
        var fieldSet: Set<ExactText> = []
        var nested = NestedShapes()
        /// Nested shapes already walked, by field (see `ShapeSkeleton`), and a buffer for the next.
        var walkedShapes: Set<[UInt8]> = []
        var skeleton: [UInt8] = []
        var next: String?
        var foundRows = false
        /// Buffers reused from record to record.
        var scratch: [UInt8] = []
        var entries: [Canonical.Entry] = []

        init(layout: RecordLayout, page: Int) {
            self.layout = layout
            self.page = page
        }

        var where_: String { page > 1 ? " on page \(page)" : "" }
        /// The line being read, in JSON Lines: a record is named by it, not by its place.
        var line: Int?
        func named(_ index: Int) -> String { "\(line.map { "line \($0)" } ?? "record \(index)")\(where_)" }

        mutating func read(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> RecordPage {
            cursor.skipWhitespace()
            guard cursor.peek() != nil else { throw JSONCursor.Failure(message: "an empty body\(where_)") }
            try visit([], &cursor)
            try cursor.expectEnd()
            guard foundRows else {
                throw JSONCursor.Failure(message: "no records at \(layout.rows.description)\(where_)")
            }
            return RecordPage(records: records, positions: nil, fields: fields, nested: nested, next: next)
        }

        /// JSON Lines: each line one JSON object, a record; blank lines (spaces, tabs, a CR)
        /// passed over, and a UTF-8 byte-order mark in front (exports from Windows tools carry
        /// one), as the csv kind passes it. Read in one pass where the lines lie, never joined
        /// into a copy; what is wrong with a line is bad data that names it.
        mutating func readLines(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> RecordPage {
            let bytes = cursor.bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { cursor.position = 3 }
            func passBlanks(_ cursor: inout JSONCursor) {
                while cursor.position < bytes.count,
                      bytes[cursor.position] == 0x20 || bytes[cursor.position] == 0x09 || bytes[cursor.position] == 0x0D { cursor.position += 1 }
            }
            let oneToALine = "a record is a JSON object, one to a line"
            var line = 1, index = 0, first = 0
            while true {
                passBlanks(&cursor)
                guard cursor.position < bytes.count else { break }
                if bytes[cursor.position] == UInt8(ascii: "\n") {
                    cursor.position += 1
                    line += 1
                    continue
                }
                guard bytes[cursor.position] == UInt8(ascii: "{") else { throw JSONCursor.Failure(message: "line \(line)\(where_): \(oneToALine)") }
                if index == 0 { first = cursor.position } else { cursor.prove(from: first, to: cursor.position) }
                let start = cursor.position
                self.line = line
                do throws(JSONCursor.Failure) {
                    try addRecord(&cursor, index: index)
                } catch where !error.timedOut && !error.message.hasPrefix(named(index)) {
                    // The JSON itself (a record's own failures name their line already).
                    throw JSONCursor.Failure(message: "\(named(index)): \(error.message)", repeatedKey: error.repeatedKey)
                }
                // An object spread over lines (pretty-printed) is not JSON Lines.
                if Memory.contains(0x0A, in: bytes.baseAddress! + start, count: cursor.position - start) {
                    throw JSONCursor.Failure(message: "\(named(index)): \(oneToALine), not spread over lines")
                }
                index += 1
                passBlanks(&cursor)
                guard cursor.position == bytes.count || bytes[cursor.position] == UInt8(ascii: "\n") else {
                    throw JSONCursor.Failure(message: "line \(line)\(where_): \(oneToALine)")
                }
            }
            foundRows = true
            return RecordPage(records: records, positions: nil, fields: fields, nested: nested, next: next)
        }

        private var nextPath: [String]? { layout.bodyValuePath?.keys }

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
            if layout.next == .lastKey {
                // The has_more value: a boolean, nothing else (1 or "yes" must not end the paging quietly).
                guard cursor.peek() == UInt8(ascii: "t") || cursor.peek() == UInt8(ascii: "f") else {
                    throw JSONCursor.Failure(message: "the value at \(layout.hasMore?.description ?? "$")\(where_) is not a boolean")
                }
                next = try cursor.readBool() ? "true" : "false"
                return
            }
            switch cursor.peek() {
            case UInt8(ascii: "\""): next = try cursor.readStringToken()
            case UInt8(ascii: "n"): _ = try cursor.readNull()
            case .some(let byte) where byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte):
                next = try Self.numberText(&cursor)  // a numeric cursor
            default:
                throw JSONCursor.Failure(message: "the next page at \(nextPath.map { JSONPath($0).description } ?? "")\(where_) is not a URL or cursor")
            }
            if next?.trimmingWhitespace().isEmpty == true { next = nil }
        }

        mutating func readRecords(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) {
            switch cursor.peek() {
            case UInt8(ascii: "["):
                var first = 0
                try cursor.readArray { cursor, index throws(JSONCursor.Failure) in
                    if index == 0 { first = cursor.position } else { cursor.prove(from: first, to: cursor.position) }
                    guard cursor.peek() == UInt8(ascii: "{") else {
                        throw JSONCursor.Failure(message: "record \(index)\(where_) is not an object")
                    }
                    try self.addRecord(&cursor, index: index)
                }
            case UInt8(ascii: "{"):
                try addRecord(&cursor, index: 0)
            case .some(let byte):
                let kind: String
                switch byte {
                case UInt8(ascii: "\""): kind = "a string"
                case UInt8(ascii: "n"): kind = "null"
                case UInt8(ascii: "t"), UInt8(ascii: "f"): kind = "a boolean"
                case UInt8(ascii: "-"), 0x30...0x39: kind = "a number"
                default: throw JSONCursor.syntaxError  // not JSON at all: an HTML error page, say
                }
                throw JSONCursor.Failure(message: "--rows \(layout.rows.description) points at \(kind)\(where_), not at records")
            case nil:
                throw JSONCursor.syntaxError
            }
        }

        /// Reads the record at the cursor. Keys of top-level fields take the fast path: the canonical
        /// form written straight from the bytes, with no tree; a dot-path key reads a tree.
        mutating func addRecord(_ cursor: inout JSONCursor, index: Int) throws(JSONCursor.Failure) {
            guard layout.key.allSatisfy({ $0.keys.count == 1 }) else {
                return try add(Self.node(&cursor), index: index)
            }
            // The canonical JSON goes straight into the arena; the key after it.
            let start = records.bytes.count
            do throws(JSONCursor.Failure) {
                try Canonical.object(&cursor, into: &records.bytes, scratch: &scratch, entries: &entries)
            } catch where error.repeatedKey {
                throw JSONCursor.Failure(message: "\(named(index)): \(error.message)", repeatedKey: true)
            }
            let json = start..<records.bytes.count
            var parts: [Canonical.Entry] = []
            parts.reserveCapacity(layout.key.count)
            for field in layout.key {
                guard let entry = entries.first(where: { scratch[$0.key].elementsEqual(field.keys[0].utf8) }),
                      entry.kind == .string || entry.kind == .number else {
                    let present = entries.contains { scratch[$0.key].elementsEqual(field.keys[0].utf8) }
                    throw JSONCursor.Failure(message: "\(named(index)) has no key field \(field.dotted)"
                        + (present ? " holding a string or number" : Self.keyHint(entries.map { Canonical.name($0, scratch) })))
                }
                parts.append(entry)
            }
            // One field: its value as text. Several: a JSON array of their canonical values.
            let key = parts.count == 1 ? Canonical.keyText(parts[0], scratch)
                : "[" + parts.map { String(decoding: scratch[$0.value], as: UTF8.self) }.joined(separator: ",") + "]"
            // Records of one API mostly have the same fields: checked once per shape.
            if !Self.sameScalars(entries, scratch, lastScalars) {
                let scalars = entries.filter { $0.kind != .container && $0.kind != .null }.map { Canonical.name($0, scratch) }
                for name in scalars where fieldSet.insert(ExactText(name)).inserted { fields.append(name) }
                lastScalars = scalars
            }
            // Nested objects and lists, for the columns and child views they make.
            for entry in entries where entry.kind == .container {
                if ShapeSkeleton.write(scratch[entry.value], into: &skeleton) {
                    skeleton.append(0)
                    skeleton.append(contentsOf: scratch[entry.key])
                    // A shape walked before has no field to add (a bound keeps odd data from growing the set).
                    if walkedShapes.contains(skeleton) || (walkedShapes.count < 10_000 && !walkedShapes.insert(skeleton).inserted) { continue }
                }
                try nested.visit(Canonical.name(entry, scratch), canonical: scratch[entry.value])
            }
            records.append(key: key, json: json)
        }

        mutating func add(_ record: JSONNode, index: Int) throws(JSONCursor.Failure) {
            var parts: [JSONNode] = []
            for field in layout.key {
                guard let value = record.at(field), value.isKey else {
                    var names: [String] = []
                    if case .object(let keys, _) = record { names = keys }
                    throw JSONCursor.Failure(message: "\(named(index)) has no key field \(field.dotted)"
                        + (record.at(field) == nil ? Self.keyHint(names) : " holding a string or number"))
                }
                parts.append(value)
            }
            let key = JSONNode.recordKey(parts)
            if case .object(let keys, let values) = record {
                for (name, value) in zip(keys, values) where value.isScalar && fieldSet.insert(ExactText(name)).inserted { fields.append(name) }
                for (name, value) in zip(keys, values) { nested.visit(name, value) }
            }
            let start = records.bytes.count
            record.write(into: &records.bytes)
            records.append(key: key, json: start..<records.bytes.count)
        }

        var lastScalars: [String] = []

        /// Whether the entries' scalar fields are `names`, in order (a plain loop: this runs per record).
        static func sameScalars(_ entries: [Canonical.Entry], _ scratch: [UInt8], _ names: [String]) -> Bool {
            var next = 0
            for entry in entries where entry.kind != .container && entry.kind != .null {
                guard next < names.count, scratch[entry.key].elementsEqual(names[next].utf8) else { return false }
                next += 1
            }
            return next == names.count
        }

        /// What a record without its key field has instead, and what to do: name the field that
        /// identifies a record, or several when no one field does.
        static func keyHint(_ names: [String]) -> String {
            guard !names.isEmpty else { return "" }
            let shown = names.prefix(12).joined(separator: ", ") + (names.count > 12 ? ", …" : "")
            let pair = names.prefix(2).joined(separator: ",")
            return " (its fields: \(shown)); give '--key' the field that identifies a record"
                + (names.count > 1 ? ", or several when no one field does, such as --key \(pair)" : "")
        }

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
            // A plain decimal of up to 15 digits not ending in 0 is already its shortest form.
            if text.count <= 16, !text.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
               text.last != UInt8(ascii: "0"), text.filter({ $0 >= 0x30 && $0 <= 0x39 }).count <= 15,
               !(text.first == UInt8(ascii: "-") && token.double == 0) {
                return String(decoding: text, as: UTF8.self)
            }
            guard let value = token.double, value.isFinite else { return String(decoding: text, as: UTF8.self) }
            // A number no Double can stand for keeps its text, so two different numbers never
            // become one: digits that underflow to 0 (1e-400), or more significant digits than
            // any Double's shortest form has (17). Up to 17 digits is a Double's spelling
            // (262.06999999999999 is 262.07), and is written as such.
            let written = significantDigits(text)
            if (value == 0 && written > 0) || written > 17 { return String(decoding: text, as: UTF8.self) }
            return JSONValue.canonicalNumber(value)
        }

        /// The significant digits of a JSON number's text: its mantissa's digits without leading
        /// and trailing zeros (`0.0150` has 2, `1e-400` has 1, `0` has none).
        static func significantDigits(_ text: UnsafeBufferPointer<UInt8>) -> Int {
            let mantissa = text.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            let digits = mantissa.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }),
                  let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") }) else { return 0 }
            return last - first + 1
        }
    }
}

extension RecordDecoder {
    /// A value of any kind, as a node (the tree reader, for dot-path keys and `RecordDiff`).
    static func node(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> JSONNode {
        try Reader.node(&cursor)
    }

    /// A number token, checked, as canonical text (for `Canonical`).
    static func numberText(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> String {
        try Reader.numberText(&cursor)
    }
}

extension Source {
    /// The keys a composite key written as people write it (`PAR,2026-12-01`: the values with
    /// commas between them) may stand for, for this source's key fields: each value a string, or,
    /// where it reads as one, a number. Empty when the text does not split into that many values
    /// (or is a JSON array already).
    package func compositeKeys(written text: String) -> [String] {
        let fieldCount = layout?.key.count ?? 1
        guard fieldCount > 1, !text.hasPrefix("[") else { return [] }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard values.count == fieldCount else { return [] }
        var keys: [[JSONNode]] = [[]]
        for value in values {
            var readings = [JSONNode.string(value)]
            let number = Array(value.utf8).withUnsafeBufferPointer { bytes -> String? in
                var cursor = JSONCursor(bytes)
                guard let text = try? RecordDecoder.numberText(&cursor), cursor.position == bytes.count else { return nil }
                return text
            }
            if let number { readings.append(.number(number)) }
            keys = keys.flatMap { key in readings.map { key + [$0] } }
            if keys.count > 64 { return [] }  // many numeric-looking values: too many readings to try
        }
        return keys.map(JSONNode.recordKey)
    }
}
