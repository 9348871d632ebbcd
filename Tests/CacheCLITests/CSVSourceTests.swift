import Foundation
import Testing

/// `--kind csv` end to end, in this process on canned answers: the view, every output form, a
/// sync that updates, removes and inserts, the removal guard, `sources set`, and every kind of
/// malformed table refused with its line, the cache left as it was. What it asks for, through
/// the binary over http from the loopback upstream.
@Suite(.gated) struct CSVSourceTests {
    static let table = "id,name,price,zip\r\n1,Apple,1.50,007\r\n2,Pear,2,010\r\n3,\"Fig, dried\",10,123\r\n4,Plum,3.25,200\r\n"

    /// A sandbox with a csv source `fruit` synced from the upstream's /fruit.csv.
    static func synced() throws -> (CannedUpstream, Sandbox) {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        serve(table, upstream)
        let add = box.cli("sources", "add", "fruit", "--kind", "csv", "--url", upstream.baseURL + "/fruit.csv", "--key", "id", upstream: upstream)
        #expect(add.status == 0, "\(add.stderr)")
        let sync = box.cli("sync", "fruit", "--json", upstream: upstream)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 4)
        return (upstream, box)
    }

    static func serve(_ text: String, _ upstream: CannedUpstream) {
        upstream.answer("/fruit.csv", body: Data(text.utf8))
    }

    /// The cached records, each its key and record (no ages: a second may pass between reads).
    static func cached(_ box: Sandbox) -> [String] {
        box.cli("sql", "SELECT key || ' ' || record FROM records WHERE source = 'fruit' ORDER BY key").stdout
            .split(separator: "\n").map(String.init)
    }

    @Test func aTableBecomesAViewWithNumbersWhereEveryValueIsOne() throws {
        let (_, box) = try Self.synced()
        let columns = try rows(box.database, "SELECT name FROM pragma_table_info('cached_fruit')").compactMap { $0["name"] }
        #expect(columns == ["key", "id", "name", "price", "zip", "seen_at", "age_s", "stale", "pending"])
        let types = try rows(box.database, "SELECT typeof(id) AS a, typeof(price) AS b, typeof(zip) AS c, typeof(name) AS d FROM cached_fruit WHERE key = '1'")
        #expect(types.first == ["a": "integer", "b": "real", "c": "text", "d": "text"])
        #expect(try rows(box.database, "SELECT name FROM cached_fruit WHERE id = 3").first?["name"] == "Fig, dried")

        let json = try box.cli("list", "fruit", "--offline", "--json").jsonArray()
        #expect(json.count == 4)
        #expect((json.first?["record"] as? [String: Any])?["zip"] as? String == "007")
        let csv = box.cli("list", "fruit", "--offline", "--csv").stdout.split(separator: "\n")
        #expect(csv.first == "key,id,name,price,zip,seen_at,age_s,stale,pending")
        #expect(csv.contains { $0.hasPrefix("3,3,\"Fig, dried\",10,123,") })
        let table = box.cli("list", "fruit", "--offline")
        #expect(table.status == 0 && table.stdout.contains("Fig, dried") && table.stdout.contains("007"))
        #expect(box.cli("export", "fruit", "--csv").stdout.split(separator: "\n").count == 5)
        let status = try box.cli("status", "--json").jsonArray()
        #expect(status.first?["kind"] as? String == "csv" && status.first?["rows"] as? Int == 4, "\(status)")
        #expect(box.cli("metrics").stdout.contains("source=\"fruit\""))
        let source = try box.cli("sources", "list", "--json").jsonArray().first
        #expect(source?["kind"] as? String == "csv" && source?["key"] as? String == "id" && source?["delimiter"] as? String == ",")
    }

    /// Each kind asks for its own media type; a source's own `Accept` header is sent alone.
    @Test func aCSVSourceAsksForCSVAndASourcesOwnAcceptWins() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let file = box.folder + "/fruit.csv"
        try Data(Self.table.utf8).write(to: URL(fileURLWithPath: file))
        try upstream.serve("/fruit.csv", file: file)
        #expect(try await box.cache("sources", "add", "fruit", "--kind", "csv", "--url", upstream.baseURL + "/fruit.csv", "--key", "id").status == 0)
        #expect(try await box.cache("sync", "fruit").status == 0)
        let accept = { try upstreamRequests(upstream, "/fruit.csv").compactMap { ($0["headers"] as? [String: String])?["accept"] } }
        #expect(try accept() == ["text/csv, */*;q=0.5"])
        #expect(try await box.cache("sources", "set", "fruit", "--header", "Accept: text/plain").status == 0)
        #expect(try await box.cache("sync", "fruit").status == 0)
        #expect(try accept().last == "text/plain")
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id").status == 0)
        #expect(try await box.cache("sync", "items").status == 0)
        #expect(try upstreamRequests(upstream, "/api/items").compactMap { ($0["headers"] as? [String: String])?["accept"] } == ["application/json"])
    }

    @Test func aChangedTableIsReconciledAndDiffedFieldByField() throws {
        let (upstream, box) = try Self.synced()
        // Pear's price changes, Plum goes, Kiwi comes.
        Self.serve("id,name,price,zip\n1,Apple,1.50,007\n2,Pear,2.5,010\n3,\"Fig, dried\",10,123\n5,Kiwi,0.75,300\n", upstream)
        let sync = box.cli("sync", "fruit", "--json", upstream: upstream)
        let report = try #require(try sync.jsonArray().first)
        #expect(report["inserted"] as? Int == 1 && report["updated"] as? Int == 1 && report["deleted"] as? Int == 1, "\(sync.stdout)")
        let diff = box.cli("diff", "fruit", upstream: upstream)
        #expect(diff.stdout.contains("~ 2  price 2 → 2.5"), "\(diff.stdout)")
        #expect(diff.stdout.contains("+ 5") && diff.stdout.contains("- 4"), "\(diff.stdout)")
        #expect(try box.cli("list", "fruit", "--offline", "--json", upstream: upstream).jsonArray().map { $0["key"] as? String } == ["1", "2", "3", "5"])
    }

    @Test func theRemovalGuardHoldsATableThatLostMostRows() throws {
        let (upstream, box) = try Self.synced()
        let before = Self.cached(box)
        Self.serve("id,name,price,zip\n1,Apple,1.50,007\n", upstream)
        let held = box.cli("sync", "fruit", upstream: upstream)
        #expect(held.status == 65 && held.stderr.contains("held: would remove 3 of 4 cached records"), "\(held.stderr)")
        #expect(Self.cached(box) == before)
        #expect(box.cli("sync", "fruit", "--accept-removals", upstream: upstream).status == 0)
        #expect(try box.cli("list", "fruit", "--offline", "--json", upstream: upstream).jsonArray().count == 1)
    }

    @Test func sourcesSetChangesTheDelimiterAndRefusesJSONOptions() throws {
        let (upstream, box) = try Self.synced()
        let set = box.cli("sources", "set", "fruit", "--delimiter", ";", upstream: upstream)
        #expect(set.status == 0 && set.stderr.contains("delimiter , → ;"), "\(set.stderr)")
        Self.serve("id;name;price;zip\n1;Apple;1.5;007\n2;Pear;2;010\n3;Fig, dried;10;123\n4;Plum;3.25;200\n", upstream)
        let sync = box.cli("sync", "fruit", "--json", upstream: upstream)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().first?["outcome"] as? String == "unchanged")
        let refused = box.cli("sources", "set", "fruit", "--rows", "$.items", upstream: upstream)
        #expect(refused.status == 64 && refused.stderr.contains("'--rows' is for json sources; 'fruit' is csv"), "\(refused.stderr)")
        let added = box.cli("sources", "add", "x", "--kind", "csv", "--url", upstream.baseURL + "/fruit.csv", upstream: upstream)
        #expect(added.status == 64 && added.stderr.contains("a csv source needs '--key <fields>'"), "\(added.stderr)")
        let json = box.cli("sources", "add", "y", "--kind", "json", "--url", upstream.baseURL + "/x", "--key", "id", "--delimiter", ";", upstream: upstream)
        #expect(json.status == 64 && json.stderr.contains("'--delimiter' is for csv sources"), "\(json.stderr)")
    }

    /// A csv key is a column's name, dots and all, at add and at `sources set --key` alike.
    @Test func aDottedColumnNameIsAKey() throws {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        Self.serve("station.id,name\nA1,North\nB2,South\n", upstream)
        #expect(box.cli("sources", "add", "st", "--kind", "csv", "--url", upstream.baseURL + "/fruit.csv",
                                    "--key", "station.id", upstream: upstream).status == 0)
        #expect(box.cli("sync", "st", upstream: upstream).status == 0)
        let byName = box.cli("sources", "set", "st", "--key", "name", upstream: upstream)
        #expect(byName.status == 0, "\(byName.stderr)")
        let back = box.cli("sources", "set", "st", "--key", "station.id", upstream: upstream)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try box.cli("list", "st", "--offline", "--json", upstream: upstream).jsonArray().compactMap { $0["key"] as? String } == ["A1", "B2"])
        // A new delimiter reads the rows anew: the next sync is not skipped as the same bytes.
        #expect(box.cli("sources", "set", "st", "--delimiter", ";", upstream: upstream).status == 0)
        let resync = box.cli("sync", "st", upstream: upstream)
        #expect(resync.status == 65 && resync.stderr.contains("the key column 'station.id' is not in the header"), "\(resync.stderr)")
    }

    struct Malformed: CustomTestStringConvertible, Sendable {
        var name: String
        var body: [UInt8]
        var reason: String
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(name: "a repeated header name", body: Array("id,name,name\n1,a,b\n".utf8), reason: "line 1: two columns are named 'name'"),
        Malformed(name: "an empty header name", body: Array("id,,zip\n1,a,b\n".utf8), reason: "line 1: column 2 of the header has no name"),
        Malformed(name: "a row without its key", body: Array("id,name\n1,a\n,b\n".utf8), reason: "line 3: no value in the key column 'id'"),
        Malformed(name: "one key, two contents", body: Array("id,name\n1,a\n1,b\n".utf8), reason: "lines 2 and 3 have the same key (1) and different contents"),
        Malformed(name: "a short row", body: Array("id,name,price\n1,a,1\n2,b\n".utf8), reason: "line 3: 2 fields where the header has 3"),
        Malformed(name: "invalid UTF-8", body: Array("id,name\n1,".utf8) + [0xFF, 0xFE] + Array("\n".utf8), reason: "line 2: field 2 is not valid UTF-8"),
        Malformed(name: "an open quote", body: Array("id,name\n1,\"never closed\n".utf8), reason: "line 2: a quoted field is not closed"),
    ]

    @Test(arguments: malformed)
    func malformedTablesAreBadDataAndWriteNothing(_ test: Malformed) throws {
        let (upstream, box) = try Self.synced()
        let before = Self.cached(box)
        upstream.answer("/fruit.csv", body: Data(test.body))
        let sync = box.cli("sync", "fruit", upstream: upstream)
        #expect(sync.status == 65, "\(sync.stderr)")
        #expect(sync.stderr.contains("cache: sync fruit: bad data: \(test.reason)"), "\(sync.stderr)")
        #expect(Self.cached(box) == before)
    }
}
