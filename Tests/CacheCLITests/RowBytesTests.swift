import Foundation
import OfflineCache
import Testing
@testable import CacheCLI

/// Rows written as bytes must read exactly as the String-built forms they replace.
@Suite(.gated) struct RowBytesTests {
    @Test func rowsWriteWhatJSONValueAndCSVTextWrite() async throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n TEXT, flag INTEGER)")
        let texts = ["plain", "comma, inside", "quote \" inside", "line\nbreak", "crlf\r\nend", "Café ☕", "", "tab\there", "\u{1}"]
        for (index, text) in texts.enumerated() {
            try db.run("INSERT INTO t VALUES (?, ?, ?, NULL, ?)", [.int(Int64(index) - 3), .double(Double(index) * 1.1), .text(text), .int(Int64(index % 2))])
        }
        let names = ["i", "r", "s", "n", "flag"]
        let writer = RowBytes(names: names, boolColumns: [4])
        let csv = RowBytes(names: names, columns: [0, 1, 2, 3])
        let statement = try db.cachedStatement("SELECT i, r, s, n, flag FROM t")
        var rows = 0
        while try statement.step() {
            var json: [UInt8] = [], line: [UInt8] = []
            writer.json(statement, into: &json)
            csv.csv(statement, into: &line)
            let values = (0..<4).map { JSONValue(statement.value($0)) } + [.bool(statement.int(4) != 0)]
            #expect(String(decoding: json, as: UTF8.self) == JSONValue.object(Array(zip(names, values))).text)
            let fields = (0..<4).map { index -> String in
                switch statement.value(index) {
                case .null: ""
                case .int(let v): String(v)
                case .double(let v): JSONValue.number(v)
                case .text(let v): v
                }
            }
            #expect(String(decoding: line, as: UTF8.self) == CSVText.row(fields))
            rows += 1
        }
        statement.reset()
        #expect(rows == texts.count)
        // A field with a CRLF is quoted (it once was not: "\r\n" is one Character in Swift).
        #expect(CSVText.row(["a\r\nb"]) == "\"a\r\nb\"\n")
    }
}
