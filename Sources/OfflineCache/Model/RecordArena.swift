import FoundationEssentials

/// One record of a generic JSON source, checked: its key and the record in canonical form.
package struct UpstreamRecord: Sendable, Equatable {
    /// The key fields' values: the value itself for one field (`42`, `abc`), a JSON array for
    /// several (`[42,"abc"]`).
    package var key: String
    /// The record as canonical JSON: object keys sorted, no whitespace, strings escaped one way.
    /// Two responses that differ only in key order or spacing give the same text.
    package var json: String

    package init(key: String, json: String) {
        self.key = key
        self.json = json
    }
}

/// Records packed into one byte buffer, each its key and its canonical JSON: a million
/// records are two allocations rather than two million.
package struct RecordArena: Sendable, Equatable {
    var bytes: [UInt8] = []
    var spans: [Span] = []

    /// A record's canonical JSON at `start`, and its key right after it (`append` writes them
    /// so): half the bytes of two ranges, for a million records sorted in place.
    struct Span: Equatable {
        var start: Int
        var jsonCount: UInt32
        var keyCount: UInt32

        var json: Range<Int> { start..<(start + Int(jsonCount)) }
        var key: Range<Int> { json.upperBound..<(json.upperBound + Int(keyCount)) }
    }

    package init() {}

    package var count: Int { spans.count }

    package subscript(index: Int) -> UpstreamRecord {
        UpstreamRecord(key: key(index), json: json(index))
    }

    package func key(_ index: Int) -> String { String(decoding: bytes[spans[index].key], as: UTF8.self) }
    package func json(_ index: Int) -> String { String(decoding: bytes[spans[index].json], as: UTF8.self) }

    /// Adds the record whose canonical JSON was just written at the end of `bytes`, and its key.
    mutating func append(key: String, json: Range<Int>) {
        precondition(json.upperBound == bytes.count, "a record's key follows its JSON")
        guard let jsonCount = UInt32(exactly: json.count), let keyCount = UInt32(exactly: key.utf8.count) else {
            preconditionFailure("a record or key of 4 GiB or more")
        }
        bytes.append(contentsOf: key.utf8)
        spans.append(Span(start: json.lowerBound, jsonCount: jsonCount, keyCount: keyCount))
    }

    mutating func append(_ other: RecordArena) {
        guard !bytes.isEmpty else { self = other; return }
        let offset = bytes.count
        bytes.append(contentsOf: other.bytes)
        spans.append(contentsOf: other.spans.map { Span(start: $0.start + offset, jsonCount: $0.jsonCount, keyCount: $0.keyCount) })
    }
}

/// The records of one page and what the page says about the next.
package struct RecordPage: Sendable, Equatable {
    /// In response order; a key may repeat (see `RecordSet.finish`).
    package var records: RecordArena
    /// Each record's place in the response, for messages (a CSV row's line); nil where it is
    /// the record's index in the page (a JSON array: a million indexes would be held to the load
    /// for nothing).
    package var positions: [Int]?
    /// The top-level fields holding a scalar (string, number, boolean), in the order first seen.
    package var fields: [String]
    /// Nested objects' scalars and top-level lists (see `NestedShapes`).
    package var nested = NestedShapes()
    /// With `next = .body`: the value found at that path (a URL or a cursor); nil at the end.
    package var next: String?
    /// Rows the decoder kept once because they came again, the same (a CSV table's repeated line).
    package var repeats = 0
}

/// Byte order of two ranges of one buffer, as SQLite compares text (memcmp, then length): the
/// order of canonical object keys and of record keys.
func compareBytes(_ bytes: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Int32 {
    let common = min(a.count, b.count)
    let compared = common == 0 ? 0 : Memory.compare(bytes.baseAddress! + a.lowerBound, bytes.baseAddress! + b.lowerBound, count: common)
    return compared != 0 ? compared : Int32(clamping: a.count - b.count)
}
