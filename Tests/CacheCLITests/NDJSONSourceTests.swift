import Foundation
import Testing
@testable import CacheCLI

/// ndjson sources: JSON Lines, one record per line, kept as json records are.
@Suite(.gated) struct NDJSONSourceTests {
    static func lines(_ count: Int) -> [String] {
        (1...count).map { #"{"id": \#($0), "name": "item-\#($0)", "owner": {"id": \#($0 % 7)}, "tags": ["t\#($0 % 3)"]}"# }
    }

    static func records(_ box: Sandbox) -> String {
        box.cacheInProcess(["sql", "SELECT key, record, seen_at FROM records ORDER BY key", "--csv"]).stdout
    }

    @Test func fiveHundredLinesSyncToFiveHundredRecords() throws {
        let box = try Sandbox()
        let file = box.folder + "/items.jsonl"
        // Blank lines, a CRLF line end and no newline at the end are all read.
        var text = Self.lines(500)
        text.insert("", at: 10)
        text[20] += "\r"
        try Data(text.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "ndjson", "--url", "file://" + file, "--key", "id"]).status == 0)
        let synced = box.cacheInProcess(["sync", "items", "--json"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try synced.jsonArray().first?["inserted"] as? Int == 500)
        // Views, nested data and search as for json records.
        let columns = try rows(box.database, "SELECT name FROM pragma_table_info('cached_items')").compactMap { $0["name"] }
        #expect(columns.contains("owner__id") && columns.contains("name"), "\(columns)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM cached_items").first?["n"] == "500")
        let found = try box.cacheInProcess(["search", "items", "item-42", "--json"]).jsonArray()
        #expect(found.first?["key"] as? String == "42", "\(found)")

        // A third line that is not one JSON value: bad data naming line 3, the cache unchanged.
        let before = Self.records(box)
        var broken = Self.lines(500)
        broken[2] = #"{"id": 3, "name": "#
        try Data(broken.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let refused = box.cacheInProcess(["sync", "items"])
        #expect(refused.status == 65 && refused.stderr.contains("line 3: "), "\(refused.stderr)")
        #expect(Self.records(box) == before)
        // Two values on one line, a line that is not an object, or an object spread over
        // lines (pretty-printed, not JSON Lines) are bad data too.
        for line in [#"{"id": 3} {"id": 4}"#, #"[{"id": 3}]"#, "3", #"{"id": 3},"#, "{\n\"id\": 3\n}"] {
            broken[2] = line
            try Data(broken.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
            let bad = box.cacheInProcess(["sync", "items"])
            #expect(bad.status == 65 && bad.stderr.contains("line 3: "), "\(line): \(bad.stderr)")
            #expect(Self.records(box) == before)
        }
    }

    /// Issue 55, item 7: a UTF-8 byte-order mark in front (exports from Windows tools carry
    /// one) is passed over, as the csv kind passes it; one anywhere else is not JSON.
    @Test func aByteOrderMarkInFrontIsPassedOver() throws {
        let box = try Sandbox()
        let file = box.folder + "/items.jsonl"
        try Data(("\u{FEFF}" + Self.lines(3).joined(separator: "\n")).utf8).write(to: URL(fileURLWithPath: file))
        #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "ndjson", "--url", "file://" + file, "--key", "id"]).status == 0)
        let synced = box.cacheInProcess(["sync", "items", "--json"])
        #expect(synced.status == 0 && (try? synced.jsonArray().first?["inserted"] as? Int) == 3, "\(synced.stderr)")
        try Data((Self.lines(1)[0] + "\n\u{FEFF}" + Self.lines(3)[1]).utf8).write(to: URL(fileURLWithPath: file))
        let refused = box.cacheInProcess(["sync", "items"])
        #expect(refused.status == 65 && refused.stderr.contains("line 2: "), "\(refused.stderr)")
    }

    @Test func anNDJSONSourceTakesOnlyTheKey() {
        let box = try! Sandbox()
        let paged = box.cacheInProcess(["sources", "add", "x", "--kind", "ndjson", "--url", "file:///x", "--key", "id", "--next", "link"])
        #expect(paged.status == 64 && paged.stderr.contains("'--next' is for json sources"), "\(paged.stderr)")
        let keyless = box.cacheInProcess(["sources", "add", "x", "--kind", "ndjson", "--url", "file:///x"])
        #expect(keyless.status == 64 && keyless.stderr.contains("ndjson source needs '--key <fields>'"), "\(keyless.stderr)")
    }
}
