
/// Canonical JSON written straight from a cursor: the same text as `JSONNode.canonical` (keys
/// sorted by their bytes, no whitespace, numbers in canonical form), without building a tree.
enum Canonical {
    enum Kind { case string, number, bool, null, container }

    /// A field of an object being written: where its name and its value are in the scratch
    /// buffer, and its value's kind.
    struct Entry {
        var key: Range<Int>
        var kind: Kind
        var value: Range<Int>
    }

    /// A field's name.
    static func name(_ entry: Entry, _ scratch: [UInt8]) -> String {
        String(decoding: scratch[entry.key], as: UTF8.self)
    }

    /// A top-level field's value as key text: a string unescaped, a number canonical.
    static func keyText(_ entry: Entry, _ scratch: [UInt8]) -> String {
        let text = scratch[entry.value]
        if entry.kind == .string {
            return RecordDiff.unquote(Array(text)) ?? String(decoding: text.dropFirst().dropLast(), as: UTF8.self)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Writes the object at the cursor, leaving its fields in `entries` (names and values in
    /// `scratch`; both cleared first, and reused by the caller from record to record). Read with
    /// the cursor's primitives rather than `readObject`: no path kept, names not made Strings.
    static func object(_ cursor: inout JSONCursor, into out: inout [UInt8], scratch: inout [UInt8],
                       entries: inout [Entry]) throws(JSONCursor.Failure) {
        scratch.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        try cursor.consume(UInt8(ascii: "{"))
        cursor.depth += 1
        defer { cursor.depth -= 1 }
        guard cursor.depth <= JSONCursor.maxDepth else { throw JSONCursor.syntaxError }
        if cursor.peek() == UInt8(ascii: "}") {
            cursor.position += 1
            return try finish(&entries, scratch, into: &out, refusingRepeats: false)
        }
        while true {
            try cursor.tick()
            // After `{` or `,` comes a key: `{"a": 1,}` is not JSON.
            guard cursor.peek() == UInt8(ascii: "\"") else { throw JSONCursor.syntaxError }
            let keyStart = scratch.count
            if let plain = cursor.readPlainASCIIString() {
                scratch.append(contentsOf: plain)
            } else {
                scratch.append(contentsOf: try cursor.readStringToken().utf8)
            }
            let key = keyStart..<scratch.count
            try cursor.consume(UInt8(ascii: ":"))
            let start = scratch.count
            let kind = try value(&cursor, into: &scratch)
            entries.append(Entry(key: key, kind: kind, value: start..<scratch.count))
            switch cursor.peek() {
            case UInt8(ascii: ","): cursor.position += 1
            case UInt8(ascii: "}"): cursor.position += 1; return try finish(&entries, scratch, into: &out, refusingRepeats: cursor.refusesRepeatedKeys)
            default: throw JSONCursor.syntaxError
            }
        }
    }

    /// Writes a nested object at the cursor.
    static func object(_ cursor: inout JSONCursor, into out: inout [UInt8]) throws(JSONCursor.Failure) {
        var values: [UInt8] = []
        var entries: [Entry] = []
        try object(&cursor, into: &out, scratch: &values, entries: &entries)
    }

    /// The object's fields in key order, each name once: a repeated name keeps its first
    /// value, as Foundation's decoder does, or is refused (`refusingRepeats`: what a sync reads,
    /// since jq, JavaScript and Python would take the last). `entries` is left without the
    /// repeats. A sort and a pass over neighbours, so an object of 100,000 keys costs what its
    /// size says.
    private static func finish(_ entries: inout [Entry], _ scratch: [UInt8], into out: inout [UInt8],
                               refusingRepeats: Bool) throws(JSONCursor.Failure) {
        let repeated: String? = scratch.withUnsafeBufferPointer { bytes in
            func compare(_ a: Range<Int>, _ b: Range<Int>) -> Int32 { compareBytes(bytes, a, b) }
            // Names, then order of appearance (a name's offset in `scratch` grows with it).
            func precedes(_ a: Entry, _ b: Entry) -> Bool {
                let compared = compare(a.key, b.key)
                return compared != 0 ? compared < 0 : a.key.lowerBound < b.key.lowerBound
            }
            var sorted = entries
            if sorted.count <= 16 {
                // Insertion sort: objects have few keys, and often come sorted already.
                for index in sorted.indices.dropFirst() {
                    let entry = sorted[index]
                    var slot = index
                    while slot > 0 && precedes(entry, sorted[slot - 1]) {
                        sorted[slot] = sorted[slot - 1]
                        slot -= 1
                    }
                    if slot != index { sorted[slot] = entry }
                }
            } else {
                sorted.sort(by: precedes)
            }
            var unique: [Entry] = []
            unique.reserveCapacity(sorted.count)
            var repeated: String?
            for entry in sorted {
                guard unique.last.map({ compare($0.key, entry.key) != 0 }) ?? true else {
                    if repeated == nil { repeated = String(decoding: UnsafeBufferPointer(rebasing: bytes[entry.key]), as: UTF8.self) }
                    continue
                }
                unique.append(entry)
            }
            if refusingRepeats, let repeated { return repeated }
            if unique.count != entries.count {
                let kept = Set(unique.map(\.key.lowerBound))
                entries.removeAll { !kept.contains($0.key.lowerBound) }
            }
            out.append(UInt8(ascii: "{"))
            for (position, entry) in unique.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.string(UnsafeBufferPointer(rebasing: bytes[entry.key]), into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[entry.value]))
            }
            out.append(UInt8(ascii: "}"))
            return nil
        }
        if let repeated {
            let shown = repeated.count > 80 ? repeated.prefix(80) + "…" : Substring(repeated)
            throw JSONCursor.Failure(message: "\"\(shown)\" is named twice in one object", repeatedKey: true)
        }
    }

    @discardableResult
    static func value(_ cursor: inout JSONCursor, into out: inout [UInt8]) throws(JSONCursor.Failure) -> Kind {
        switch cursor.peek() {
        case UInt8(ascii: "{"):
            try object(&cursor, into: &out)
            return .container
        case UInt8(ascii: "["):
            out.append(UInt8(ascii: "["))
            try cursor.readArray { cursor, index throws(JSONCursor.Failure) in
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try value(&cursor, into: &out)
            }
            out.append(UInt8(ascii: "]"))
            return .container
        case UInt8(ascii: "\""):
            if let plain = cursor.readPlainASCIIString() {
                // Printable ASCII without escapes is its own canonical form.
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: plain)
                out.append(UInt8(ascii: "\""))
            } else {
                JSONBytes.string(try cursor.readStringToken(), into: &out)
            }
            return .string
        case UInt8(ascii: "t"):
            try cursor.skipValue()
            JSONBytes.literal("true", into: &out)
            return .bool
        case UInt8(ascii: "f"):
            try cursor.skipValue()
            JSONBytes.literal("false", into: &out)
            return .bool
        case UInt8(ascii: "n"):
            _ = try cursor.readNull()
            JSONBytes.literal("null", into: &out)
            return .null
        default:
            out.append(contentsOf: try RecordDecoder.numberText(&cursor).utf8)
            return .number
        }
    }
}
