import Foundation
@testable import OfflineCache
import Testing

/// Nested json records: nested objects' scalars as `__` columns of `cached_NAME`, each
/// top-level list as a child view `cached_NAME__FIELD`, following every change of the records.
@Suite(.gated) struct NestedDataTests {
    nonisolated(unsafe) static let items: [[String: Any]] = [
        ["id": 1, "name": "one", "owner": ["login": "ann", "id": 7, "address": ["city": "Oslo", "geo": ["lat": 59.9]]],
         "tags": ["red", "blue"], "variants": [["sku": "1-a", "qty": 2], ["sku": "1-b", "qty": 0, "extra": ["k": 1]]], "empty": [Int]()],
        ["id": 2, "name": "two", "owner": ["login": "bob", "id": 8], "tags": ["green"], "variants": [["sku": "2-a", "qty": 5]]],
        ["id": 3, "name": "three", "owner": NSNull(), "tags": [1, "x", ["sku": "odd"]], "variants": [[String: Any]]()],
    ]

    func setUp() throws -> (LoopbackUpstream, Sandbox) {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setItems(Self.items)
        #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id"]).status == 0)
        #expect(box.cacheInProcess(["sync", "items"]).status == 0)
        return (upstream, box)
    }

    func columns(_ box: Sandbox, _ view: String) throws -> [String] {
        try rows(box.database, "SELECT name FROM pragma_table_info('\(view)')").compactMap { $0["name"] }
    }

    func lines(_ box: Sandbox, _ sql: String) throws -> [String] {
        try rows(box.database, sql).map { row in row.keys.sorted().map { "\($0)=\(row[$0]!)" }.joined(separator: " ") }
    }

    @Test func nestedObjectsAreColumnsAndListsAreChildViews() throws {
        let (_, box) = try setUp()
        // Three keys deep at most: owner.address.geo.lat stays in the record only.
        // (Columns come in the order fields are first seen; the test's JSON has no fixed key order.)
        let main = try columns(box, "cached_items")
        #expect(main.first == "key" && main.suffix(4) == ["seen_at", "age_s", "stale", "pending"])
        #expect(Set(main) == ["key", "id", "name", "owner__address__city", "owner__id", "owner__login", "seen_at", "age_s", "stale", "pending"])
        #expect(try lines(box, "SELECT key, owner__login, owner__address__city FROM cached_items ORDER BY key")
                == ["key=1 owner__address__city=Oslo owner__login=ann", "key=2 owner__address__city=NULL owner__login=bob",
                    "key=3 owner__address__city=NULL owner__login=NULL"])

        #expect(try columns(box, "cached_items__tags") == ["key", "idx", "value", "sku"])
        #expect(try lines(box, "SELECT * FROM cached_items__tags ORDER BY key, idx")
                == ["idx=0 key=1 sku=NULL value=red", "idx=1 key=1 sku=NULL value=blue", "idx=0 key=2 sku=NULL value=green",
                    "idx=0 key=3 sku=NULL value=1", "idx=1 key=3 sku=NULL value=x", "idx=2 key=3 sku=odd value=NULL"])
        #expect(try columns(box, "cached_items__variants").sorted() == ["idx", "key", "qty", "sku"])
        #expect(try lines(box, "SELECT * FROM cached_items__variants ORDER BY key, idx")
                == ["idx=0 key=1 qty=2 sku=1-a", "idx=1 key=1 qty=0 sku=1-b", "idx=0 key=2 qty=5 sku=2-a"])
        #expect(try columns(box, "cached_items__empty") == ["key", "idx", "value"])

        // `list` reads the same columns from the same places, in every form, as of now or then.
        let csv = box.cacheInProcess(["list", "items", "--csv", "--offline", "--columns", "owner__login,owner__address__city"]).stdout
        let header = try #require(csv.split(separator: "\n").first).split(separator: ",").map(String.init)
        let login = try #require(header.firstIndex(of: "owner__login")), city = try #require(header.firstIndex(of: "owner__address__city"))
        let first = try #require(csv.split(separator: "\n").dropFirst().first).split(separator: ",", omittingEmptySubsequences: false)
        #expect(first[login] == "ann" && first[city] == "Oslo", "\(csv)")
        let table = box.cacheInProcess(["list", "items", "--offline", "--columns", "owner__login,owner__address__city"]).stdout
        #expect(table.contains("ann") && table.contains("Oslo") && table.contains("bob"), "\(table)")
        #expect(box.cacheInProcess(["list", "items", "--as-of", Timestamp.now(), "--columns", "owner__login"]).stdout.contains("bob"))

        let listed = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(listed["view"] as? String == "cached_items")
        #expect((listed["child_views"] as? [String])?.sorted() == ["cached_items__empty", "cached_items__tags", "cached_items__variants"])
    }

    @Test func aChangedListAndARemovedRecordShowInTheChildViews() throws {
        let (upstream, box) = try setUp()
        var items = Self.items
        items[0]["tags"] = ["teal"]
        items[0]["variants"] = [["sku": "1-a", "qty": 3, "size": "L"]]
        items.remove(at: 1)
        try upstream.setItems(items)
        let sync = try #require(try box.cacheInProcess(["sync", "items", "--json"]).jsonArray().first)
        #expect(sync["updated"] as? Int == 1 && sync["deleted"] as? Int == 1, "\(sync)")
        #expect(try lines(box, "SELECT key, idx, value FROM cached_items__tags ORDER BY key, idx")
                == ["idx=0 key=1 value=teal", "idx=0 key=3 value=1", "idx=1 key=3 value=x", "idx=2 key=3 value=NULL"])
        // A new field in the items is a new column; record 2 is gone from every view.
        #expect(try columns(box, "cached_items__variants").last == "size")
        #expect(try lines(box, "SELECT key, qty, size FROM cached_items__variants") == ["key=1 qty=3 size=L"])
        #expect(try rows(box.database, "SELECT count(*) AS n FROM cached_items WHERE key = '2'").first?["n"] == "0")
    }

    @Test func childViewsSurviveAMigrationAndGoWithTheirSource() throws {
        let (_, box) = try setUp()
        let database = try CacheDatabase(path: box.database, access: .write)
        // What every migration does to views: all dropped, then made again from what the cache keeps.
        try DerivedViews.drop(database.connection)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sqlite_schema WHERE name LIKE 'cached_items%'").first?["n"] == "0")
        try DerivedViews.create(database.connection)
        #expect(try lines(box, "SELECT key, idx, value FROM cached_items__tags WHERE key = '1' ORDER BY idx") == ["idx=0 key=1 value=red", "idx=1 key=1 value=blue"])
        #expect(try columns(box, "cached_items") .contains("owner__login"))

        #expect(box.cacheInProcess(["sources", "remove", "items", "--yes"]).status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sqlite_schema WHERE name LIKE 'cached_items%'").first?["n"] == "0")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM record_lists").first?["n"] == "0")
    }

    /// A child view's name follows the rules of every view's: one already taken, in any case,
    /// gets `_json` after it.
    @Test func aChildViewsNameTakenElsewhereGetsASuffix() throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setItems(Self.items)
        for name in ["Items__Tags", "items"] {
            #expect(box.cacheInProcess(["sources", "add", name, "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id"]).status == 0)
            #expect(box.cacheInProcess(["sync", name]).status == 0)
        }
        let listed = try box.cacheInProcess(["sources", "list", "--json"]).jsonArray()
        let items = try #require(listed.first { $0["name"] as? String == "items" })
        #expect((items["child_views"] as? [String])?.contains("cached_items__tags_json") == true, "\(items)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM cached_items__tags_json").first?["n"] == "6")
    }
}
