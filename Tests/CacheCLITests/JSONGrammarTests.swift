import Foundation
import Testing

/// Both decoders (the payload decoder of the account and jokes kinds, and the record decoder of
/// json sources) held to RFC 8259's grammar, case by case, through a real sync of a file source:
/// every text outside the grammar is refused with 65 and nothing cached changes; every valid
/// text is accepted, and a record keeps its values.
@Suite struct JSONGrammarTests {
    /// Values outside the grammar, each placed where a value goes (in a field no kind reads, so
    /// the skipping reader is held to the grammar too, and in a record, which is read whole).
    static let invalidValues: [String] = [
        // Structure
        "[1,]", "[,1]", "[1,,2]", "[1 2]", "[", "[1", "[1]]", "{", "{\"a\":1,}", "{,\"a\":1}", "{\"a\":1,,\"b\":2}",
        "{\"a\" 1}", "{\"a\":}", "{\"a\"}", "{1:2}", "{'a':1}", "{a:1}", "{\"a\":1 \"b\":2}", "{\"a\":1}}", "{\"a\":[1}", "[{]}",
        // Numbers
        "01", "-01", "1.", ".5", "+1", "1e", "1e+", "1E-", "-", "--1", "1.2.3", "0x10", "1_000", "NaN", "Infinity", "-Infinity",
        "1.e3", "1ee3",
        // Literals
        "tru", "nul", "True", "NULL", "falsey", "undefined",
        // Strings
        "\"abc", "'abc'", #""\x""#, #""\u12""#, #""\u12G4""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, "\"a\tb\"",
        "\"a\nb\"", "\"a\u{1F}b\"",
    ]

    /// Strings holding bytes that are not UTF-8 (lone continuation, overlong, a surrogate, past
    /// U+10FFFF, cut short), as raw bytes.
    static let invalidUTF8: [[UInt8]] = [[0x80], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
                                         [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82]]

    /// Valid values, each of which a record keeps as Foundation reads it.
    static let validValues: [String] = [
        "{}", "[]", "[[]]", "{\"\":0}", "[1, 2.5, -3e2, 0, -0, 0.0, 1E+2, 1e-2, 12345678901234]", "true", "false", "null",
        #""\u0000 \" \\ \/ \b \f \n \r \t""#, #""\ud83d\ude00 \u00e9""#, "\"é 😀 \u{10FFFF}\"", " \t\n\r[ 1 , { \"a\" : [ ] } ] \t\n\r",
        "{\"a\":{\"b\":{\"c\":[{\"d\":[null]}]}}}", "\"\"", "-1.5E-7", "[\"a\", {\"k\": \"v\", \"k2\": [true, false]}]",
    ]

    func write(_ box: Sandbox, _ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: box.folder + "/" + name))
    }

    /// One source of each kind, each synced once from a valid body.
    func sources(_ box: Sandbox) throws {
        try write(box, "jokes.json", Array(#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p"}]"#.utf8))
        try write(box, "records.json", Array(#"[{"id": 1, "x": 1}]"#.utf8))
        try write(box, "account.json", Array(#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": []}}"#.utf8))
        for (name, kind, extra) in [("jokes", "jokes", []), ("records", "json", ["--key", "id"]), ("account", "account", [])] {
            #expect(box.cacheInProcess(["sources", "add", name, "--kind", kind, "--url", "file://\(box.folder)/\(name).json"] + extra).status == 0)
            #expect(box.cacheInProcess(["sync", name]).status == 0)
        }
    }

    /// The same value in each kind's body: a field no kind reads (skipped), and a record's field.
    func bodies(_ value: [UInt8]) -> [(source: String, body: [UInt8])] {
        [("jokes", Array(#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p", "x": "#.utf8) + value + Array("}]".utf8)),
         ("records", Array(#"[{"id": 1, "x": "#.utf8) + value + Array("}]".utf8)),
         ("account", Array(#"{"status": 200, "message": "OK", "extra": "#.utf8) + value
            + Array(#", "body": {"name": "J", "currentBalance": 1, "transactions": []}}"#.utf8))]
    }

    @Test func everyTextOutsideTheGrammarIsRefusedAndNothingChanges() throws {
        let box = try Sandbox()
        try sources(box)
        let before = try cacheDump(box.database)
        let cases = Self.invalidValues.map { Array($0.utf8) } + Self.invalidUTF8.map { [0x22] + $0 + [0x22] }
        // And the cases the hostile pass found: a trailing comma at the top of a record, and in
        // the account's body, which a kind reads.
        var whole: [(String, [UInt8])] = [("records", Array(#"[{"id":1,"a":2,}]"#.utf8)),
                                          ("account", Array(#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [],}}"#.utf8)),
                                          ("account", Array(#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00",}]}}"#.utf8)),
                                          ("jokes", Array(#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p",}]"#.utf8))]
        for value in cases { whole += bodies(value) }
        for (source, body) in whole {
            try write(box, source + ".json", body)
            let result = box.cacheInProcess(["sync", source])
            let shown = String(decoding: body, as: UTF8.self).debugDescription
            #expect(result.status == 65, "\(source) \(shown): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("not valid JSON"), "\(source) \(shown): \(result.stderr)")
        }
        // The failures are recorded in the history; the rows, the search index and the
        // change log are as they were.
        #expect(try cacheDump(box.database) == before)
    }

    @Test func everyValidTextIsAcceptedAndARecordKeepsItsValues() throws {
        let box = try Sandbox()
        try sources(box)
        for value in Self.validValues {
            for (source, body) in bodies(Array(value.utf8)) {
                try write(box, source + ".json", body)
                let result = box.cacheInProcess(["sync", source])
                #expect(result.status == 0, "\(source) \(value.debugDescription): \(result.stderr)")
            }
            let listed = try box.cacheInProcess(["list", "records", "--json"]).jsonArray()
            let kept = try #require((listed.first?["record"] as? [String: Any])?["x"], "\(value.debugDescription): \(listed)")
            let expected = try #require((try JSONSerialization.jsonObject(with: Data("{\"x\": \(value)}".utf8)) as? [String: Any])?["x"])
            #expect(NSArray(array: [kept]).isEqual(NSArray(array: [expected])), "\(value.debugDescription): kept \(kept), expected \(expected)")
        }
    }
}
