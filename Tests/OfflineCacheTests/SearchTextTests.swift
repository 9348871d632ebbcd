import Foundation
@testable import OfflineCache
import Testing

/// `cache_strings`, the string values a record's search document holds, gives what SQLite's
/// `json_tree` gives for the same JSON: every string value, nested or in lists, never a key.
@Suite(.computing) struct SearchTextTests {
    static func both(_ db: Connection, _ json: String) throws -> (String?, String?) {
        let ours = try db.scalarText("SELECT cache_strings(?)", [.text(json)])
        let sqlite = try db.scalarText("SELECT group_concat(value, ' ') FROM json_tree(?) WHERE type = 'text'", [.text(json)])
        return (ours, sqlite)
    }

    @Test(arguments: [
        #"{"name":"Café Rouge","city":"Paris"}"#,
        #"{"a":{"b":{"c":"deep"}},"list":["x",1,"y",{"z":"zz"}],"n":3,"t":true,"nil":null}"#,
        #"{"esc":"quote \" slash \\ solidus \/ tab\tnew\nline","uni":"\u00e9\u4e2d\ud83d\ude00"}"#,
        #"{"key: with colon":"value","k":"a : b"}"#,
        #"[ "spaced" , { "k" : "v" } ]"#,
        #"{"numbers":[1,2.5,-3e2],"empty":""}"#,
        #"{}"#, #"[]"#, #""alone""#,
    ])
    func matchesJSONTree(_ json: String) throws {
        let db = try Connection(path: ":memory:")
        let (ours, sqlite) = try Self.both(db, json)
        #expect(ours == sqlite, "\(json)")
    }

    /// `cache_strings` writes into a buffer as long as its input: text cut anywhere (inside a
    /// string, an escape, a surrogate pair) or escapes that stand for nothing never write more.
    /// (The debug build checks the bound itself.)
    @Test func textCutAnywhereNeverYieldsMoreThanItHolds() throws {
        let db = try Connection(path: ":memory:")
        let whole = #"{"a":"x\u00e9\ud83d\ude00 \\ \"q\"","b":["\ud800","\uZZZZ","\u12"],"c":"plain"}"#
        let odd = [#""\ud800\u0041""#, #""\"#, #""\u"#, #""\ud83d\u"#, #"["a""b"]"#, #""""#, #"":"x""#, #""\t\t\t\t\t\t\t\t""#]
        for json in (0...whole.utf8.count).map({ String(decoding: whole.utf8.prefix($0), as: UTF8.self) }) + odd {
            let text = try db.scalarText("SELECT cache_strings(?)", [.text(json)])
            #expect((text?.utf8.count ?? 0) <= json.utf8.count, "\(json) gave \(text ?? "NULL")")
        }
        // A lone surrogate stands for a space; an escape that is not one ends the scan (after
        // the space before its value).
        let value = try db.scalarText("SELECT cache_strings(?)", [.text(whole)])
        #expect(value == "x\u{E9}\u{1F600} \\ \"q\"" + " " + " " + " ")
    }

    /// Generated records with strings of every kind of character, escaped as JSON escapes them.
    @Test func matchesJSONTreeOnGeneratedRecords() throws {
        let db = try Connection(path: ":memory:")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab cé中😀\"\\/\n\t:{}[],") + [Character(UnicodeScalar(1))]
        for _ in 0..<300 {
            var record: [String: Any] = [:]
            for field in 0..<Int.random(in: 1...6, using: &generator) {
                let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                record["f\(field)"] = Bool.random(using: &generator) ? text : ["nested": [text, field]]
            }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
            let (ours, sqlite) = try Self.both(db, json)
            #expect(ours == sqlite, "\(json)")
        }
    }
    /// `cache_digest`, what a reindex compares documents by: the same set in any order gives the
    /// same digest, a NULL text is no document, and a key's end is never a text's start.
    @Test func theDocumentsDigestIsASetsAndTellsSetsApart() throws {
        let db = try Connection(path: ":memory:")
        func digest(_ documents: [(String?, String?)]) throws -> String? {
            let rows = documents.map { key, text in
                "SELECT \(key.map { "'\($0)'" } ?? "NULL") AS k, \(text.map { "'\($0)'" } ?? "NULL") AS t"
            }.joined(separator: " UNION ALL ")
            return try db.scalarText("SELECT cache_digest(k, t) FROM (\(rows))")
        }
        let set = [("1", "a b"), ("2", "c"), ("3", "")].map { (Optional($0.0), Optional($0.1)) }
        #expect(try digest(set) == digest(set.reversed()))
        #expect(try digest(set)?.hasPrefix("3:") == true)
        #expect(try digest(set + [("4", nil)]) == digest(set))
        #expect(try db.scalarText("SELECT cache_digest(1, 'x') WHERE 0") == "0:0")
        for other in [[("1", "a b"), ("2", "c")], [("1", "a b"), ("2", "c"), ("3", " ")], [("1", "a b"), ("2", "c"), ("4", "")],
                      [("1", "a"), ("2", "c"), ("3", "")], [("1", "a b"), ("2", "c"), ("3", ""), ("3", "")]] {
            #expect(try digest(other.map { (Optional($0.0), Optional($0.1)) }) != digest(set), "\(other)")
        }
        #expect(try digest([("ab", "c")]) != digest([("a", "bc")]))
        #expect(try digest([(nil, "x")]) != digest([("", "x")]))
    }
}
