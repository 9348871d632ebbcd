import Foundation
import Testing
@testable import OfflineCache

/// Generic records: the canonical form, and the fast reader held equal to the tree reader.
@Suite(.computing) struct RecordDecoderTests {
    static let records = [
        #"{"b": 1, "id": 1, "a": "x"}"#,
        "{ \"a\" : \"x\" , \"id\":1,\n    \"b\" : 1 }",
        #"{"id": 7, "price": 1.50, "ratio": 2.0, "big": 12345678901234567890, "tiny": 1e-7, "neg": -0.0, "exp": 1E2}"#,
        #"{"id": 8, "name": "caf\u00e9 \"quoted\" \\ tab\t", "emoji": "😀", "esc": "\/"}"#,
        #"{"id": 9, "nested": {"z": [3, {"y": null, "x": true}], "a": false}, "list": [1, "two", 3.25]}"#,
        #"{"id": "é", "ünïcode": 1, "Z": 2, "a": 3, "_": 4}"#,
        #"{"id": 12, "price": 262.06999999999999, "trailing": 1}"#,
    ]

    func bothWays(_ text: String) throws -> (fast: String, tree: String) {
        let body = Data("[\(text)]".utf8)
        let fast = try RecordDecoder.decode(body, layout: RecordLayout(key: [JSONPath(["id"])]))
        // The tree reader (which dot-path keys take), on the same bytes.
        let tree = try body.withUnsafeBytes { raw -> String in
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self))
            var result = ""
            try cursor.readArray { cursor, _ throws(JSONCursor.Failure) in result = try RecordDecoder.node(&cursor).canonical }
            return result
        }
        return (fast.records.json(0), tree)
    }

    /// A record that names a field twice is bad data, the field named (issue 55, item 5):
    /// Foundation would keep the first value, jq and Python the last.
    @Test func aRecordNamingAFieldTwiceIsBadData() {
        for text in [#"{"id": 10, "dup": "first", "dup": "second"}"#, #"{"id": 10, "id": 11}"#,
                     #"{"id": 10, "nested": {"a": 1, "a": 2}}"#, #"{"id": 10, "list": [{"a": 1, "a": 2}]}"#] {
            do {
                _ = try RecordDecoder.decode(Data("[\(text), {\"id\": 99}]".utf8), layout: RecordLayout(key: [JSONPath(["id"])]))
                Issue.record("\(text) was read")
            } catch {
                #expect("\(error)".hasPrefix("bad data: record 0: \"") && "\(error)".hasSuffix("\" is named twice in one object"), "\(error)")
            }
        }
    }

    @Test(arguments: records)
    func theFastReaderWritesWhatTheTreeWrites(_ text: String) throws {
        let (fast, tree) = try bothWays(text)
        #expect(fast == tree)
    }

    /// A page decoded as a sync decodes it, its records given back as they are read (here as
    /// zeros, at once, and in real pages), reads the same records, or fails the same way: a bad
    /// record late in the page, a cut, the next page's link after the records.
    @Test func aPageGivenBackAsItIsReadReadsTheSame() throws {
        let zeroing = BodyRelease(every: 1) { start, count in start.initializeMemory(as: UInt8.self, repeating: 0, count: count) }
        // 5,000 records (300 KB) given back every 16 KiB: about 19 releases a body, as 20,000
        // records every 64 KiB made, in a quarter of the time (this was 13 of the suite's CPU-seconds).
        let pages = BodyRelease(every: 16 << 10, discard: BodyRelease.pages.discard)
        let many = (0..<5_000).map { #"{"id": \#($0), "name": "item-\#($0)", "tags": ["a", {"b": \#($0 % 7)}]}"# }
        let bodies = [
            "[\(Self.records.joined(separator: ", "))]",
            "[\(many.joined(separator: ",\n "))]",
            "[\(many.dropLast().joined(separator: ", ")), 42]",
            "[\(many.dropLast().joined(separator: ", ")), {\"name\": \"no key\"}]",
            String("[\(many.joined(separator: ", "))]".dropLast(300)),
            #"{"results": [\#(many.joined(separator: ", "))], "next": "https://h/?page=2"}"#,
        ]
        for text in bodies {
            let layout = text.hasPrefix("{") ? RecordLayout(rows: JSONPath(["results"]), key: [JSONPath(["id"])], next: .body(JSONPath(["next"])))
                                             : RecordLayout(key: [JSONPath(["id"])])
            func read(_ release: BodyRelease?) -> Result<RecordPage, UpstreamError> {
                Result { () throws(UpstreamError) in try RecordDecoder.decode(Data(text.utf8), layout: layout, release: release) }
            }
            let kept = read(nil)
            #expect(read(zeroing) == kept, "\(text.prefix(80))")
            #expect(read(pages) == kept, "\(text.prefix(80))")
        }
    }

    @Test func canonicalFormIgnoresKeyOrderSpacingAndNumberSpelling() throws {
        #expect(try bothWays(Self.records[0]).fast == #"{"a":"x","b":1,"id":1}"#)
        #expect(try bothWays(Self.records[1]).fast == #"{"a":"x","b":1,"id":1}"#)
        let numbers = try bothWays(Self.records[2]).fast
        #expect(numbers == #"{"big":12345678901234567890,"exp":100,"id":7,"neg":0,"price":1.5,"ratio":2,"tiny":1e-07}"#)
        #expect(try bothWays(Self.records[6]).fast.contains(#""price":262.07"#))
    }

    /// Numbers no Double can stand for keep their text: distinct records never collapse into
    /// one key or one content (1e-400 and 2e-400 were both 0).
    @Test func numbersADoubleCannotHoldKeepTheirText() throws {
        let body = Data(#"[{"id": 1e-400}, {"id": 2e-400}, {"id": 3, "x": 12345678901234567891.5}, {"id": 4, "x": 12345678901234567891.6}, {"id": 5, "x": 0.0e-400}]"#.utf8)
        let page = try RecordDecoder.decode(body, layout: RecordLayout(key: [JSONPath(["id"])]))
        #expect((0..<page.records.count).map { page.records.key($0) } == ["1e-400", "2e-400", "3", "4", "5"])
        let records = (0..<page.records.count).map { page.records.json($0) }
        // The tree reader (dot-path keys) writes the same.
        #expect(try bothWays(#"{"id": 3, "x": 12345678901234567891.5}"#).tree == records[2])
        #expect(records[2] == #"{"id":3,"x":12345678901234567891.5}"#)
        #expect(records[3] == #"{"id":4,"x":12345678901234567891.6}"#)
        #expect(records[4] == #"{"id":5,"x":0}"#, "a zero is a zero, however it is spelled")
        #expect(JSONValue.number(9007199254740992) == "9007199254740992")
        #expect(JSONValue.number(1e20) == "1e+20")
        // Records keep the spelling they were stored with: 1.5e15 as before.
        let big = try RecordDecoder.decode(Data(#"[{"id": 1, "n": 1.5e15}]"#.utf8), layout: RecordLayout(key: [JSONPath(["id"])]))
        #expect(big.records.json(0) == #"{"id":1,"n":1500000000000000.0}"#)
    }

    @Test func keysAreFoundInNestedPathsAndCompositeKeysAreArrays() throws {
        let body = Data(#"[{"user": {"id": 7}, "repo": "a"}, {"user": {"id": 7}, "repo": "b"}]"#.utf8)
        let page = try RecordDecoder.decode(body, layout: RecordLayout(key: [JSONPath(["user", "id"]), JSONPath(["repo"])]))
        #expect(page.records.count == 2)
        #expect(page.records.key(0) == #"[7,"a"]"# && page.records.key(1) == #"[7,"b"]"#)
    }

    /// Shapes compare without values; a list's repeated items count once; kinds and keys count.
    @Test func shapeSkeletonsKeepKeysAndKindsOnly() {
        func skeleton(_ json: String) -> String? {
            var out: [UInt8] = []
            return ShapeSkeleton.write(Array(json.utf8)[...], into: &out) ? String(decoding: out, as: UTF8.self) : nil
        }
        #expect(skeleton(#"{"id":7,"login":"ann"}"#) == skeleton(#"{"id":8,"login":"bob"}"#))
        #expect(skeleton(#"["a","b","c"]"#) == skeleton(#"["x"]"#))
        #expect(skeleton(#"[{"q":1},{"q":2}]"#) == #"[{"q":0}]"#)
        #expect(skeleton(#"{"id":7}"#) != skeleton(#"{"id":"7"}"#))
        #expect(skeleton(#"{"id":null}"#) != skeleton(#"{"id":1}"#))
        #expect(skeleton(#"[1,"a",1]"#) == "[0s0]")
        #expect(skeleton(#"{"a":"x\"y","b":[]}"#) == #"{"a":s,"b":[]}"#)
        #expect(skeleton(#"{"a":1"#) == nil)
    }

    /// Records whose nested shapes repeat are walked once, and find the same fields as a walk of each.
    @Test func nestedFieldsAreFoundOnceShapesRepeat() throws {
        var records: [String] = []
        for n in 1...50 {
            let extra = n == 40 ? #","zip":"0150""# : ""
            records.append(#"{"id":\#(n),"owner":{"login":"u\#(n)","address":{"city":"Oslo"\#(extra)}},"tags":[\#(n % 3 == 0 ? #""a",1"# : #""b""#)]}"#)
        }
        let page = try RecordDecoder.decode(Data(("[" + records.joined(separator: ",") + "]").utf8), layout: RecordLayout(key: [JSONPath(["id"])]))
        #expect(page.nested.objectFields == [["owner", "address", "city"], ["owner", "login"], ["owner", "address", "zip"]])  // zip first seen in record 40
        #expect(page.nested.lists == [NestedShapes.List(name: "tags", hasScalars: true, fields: [])])
    }
}
