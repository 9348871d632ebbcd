import Foundation
import OfflineCache
import Testing

/// Incremental json sources against the loopback upstream's `?updated_since=` filter, over real
/// HTTP (the command runs in-process): the watermark sent, changes merged, nothing removed
/// until a full sync, which goes through the removal guard.
@Suite(.gated) struct IncrementalSyncTests {
    static let options = ["--key", "id", "--next", "link", "--since-param", "updated_since", "--cursor-field", "updated_at"]

    func add(_ upstream: LoopbackUpstream, _ box: Sandbox, _ extra: [String] = []) {
        let added = box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100"]
                                       + Self.options + extra)
        #expect(added.status == 0, "\(added.stderr)")
    }

    func sync(_ box: Sandbox, _ extra: [String] = []) throws -> [String: Any] {
        let result = box.cacheInProcess(["sync", "items", "--json"] + extra)
        return try #require(try result.jsonArray().first, "\(result.stdout) \(result.stderr)")
    }

    /// The `updated_since` each request of the last sync sent (nil where none).
    func sentSince(_ upstream: LoopbackUpstream, last count: Int) throws -> [String?] {
        try upstreamRequests(upstream, "/api/items").suffix(count).map { request in
            URLComponents(string: "http://h/?" + (request["query"] as? String ?? ""))?.queryItems?.first { $0.name == "updated_since" }?.value
        }
    }

    func keys(_ box: Sandbox) throws -> Set<String> {
        Set(try rows(box.database, "SELECT key FROM records").compactMap { $0["key"] })
    }

    func status(_ box: Sandbox) throws -> [String: Any] {
        try #require(try box.cacheInProcess(["status", "--json"]).jsonArray().first)
    }

    @Test func theSecondSyncSendsTheWatermarkMergesAndRemovesNothingUntilAFullOne() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        add(upstream, box)
        let first = try sync(box)
        #expect(first["inserted"] as? Int == 300 && first["note"] as? String == "full sweep", "\(first)")
        #expect(try sentSince(upstream, last: 3) == [nil, nil, nil])
        // The largest updated_at of the generated items (day 1 + n % 28).
        #expect(try status(box)["watermark"] as? String == "2026-11-28T10:00:00Z")
        #expect(try status(box)["last_full_at"] is String)

        // Upstream: item 5 changes (a later updated_at), item 7 is deleted.
        var items = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: upstream.baseURL + "/api/items?per_page=300")!)) as? [[String: Any]])
        let five = try #require(items.firstIndex { $0["id"] as? Int == 5 })
        items[five]["price"] = 999
        items[five]["updated_at"] = "2026-12-01T00:00:00Z"
        items.removeAll { $0["id"] as? Int == 7 }
        try upstream.setItems(items)
        try age(box.database, by: 3600)  // every row past its 15-minute TTL

        let second = try sync(box)
        #expect(second["inserted"] as? Int == 0 && second["updated"] as? Int == 1 && second["deleted"] as? Int == 0, "\(second)")
        #expect(second["note"] as? String == "incremental: updated_since=2026-11-28T10:00:00Z")
        #expect(try sentSince(upstream, last: 1) == ["2026-11-28T10:00:00Z"])
        #expect(try keys(box).count == 300 && keys(box).contains("7"))
        #expect(try rows(box.database, "SELECT json_extract(record, '$.price') AS p FROM records WHERE key = '5'").first?["p"] == "999")
        #expect(try status(box)["watermark"] as? String == "2026-12-01T00:00:00Z")
        // An incremental answer says nothing else changed: every row is confirmed, none stale.
        #expect(try box.cacheInProcess(["list", "items", "--stale", "--offline", "--json"]).jsonArray().isEmpty)

        // `--full` asks for everything and removes what upstream no longer has.
        let full = try sync(box, ["--full"])
        #expect(full["deleted"] as? Int == 1 && full["note"] as? String == "full sweep", "\(full)")
        #expect(try sentSince(upstream, last: 3) == [nil, nil, nil])
        #expect(try !keys(box).contains("7") && keys(box).count == 299)
    }

    @Test func theRemovalGuardHoldsAFullSyncThatWouldRemoveTooMuch() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        add(upstream, box)
        #expect(try sync(box)["inserted"] as? Int == 300)
        try upstream.setItems(count: 100)  // two thirds gone upstream
        let incremental = try sync(box)
        #expect(incremental["deleted"] as? Int == 0 && (incremental["note"] as? String)?.hasPrefix("incremental") == true)
        let full = box.cacheInProcess(["sync", "items", "--full", "--json"])
        #expect(try full.jsonArray().first?["outcome"] as? String == "held", "\(full.stdout)")
        #expect(try keys(box).count == 300)
        // Held is not done: the next sync, --full or not, sweeps again (and is held again) ...
        let again = try sync(box)
        #expect(again["outcome"] as? String == "held" && again["note"] as? String == "full sweep", "\(again)")
        #expect(try keys(box).count == 300)
        // ... and the command the held message names applies it: no --full needed.
        let message = try #require(full.stderr.split(separator: "\n").first { $0.contains("--accept-removals") })
        #expect(message.contains("run 'cache sync items --accept-removals' to apply it"), "\(message)")
        let accepted = try sync(box, ["--accept-removals"])
        #expect(accepted["deleted"] as? Int == 200 && accepted["outcome"] as? String == "updated", "\(accepted)")
        #expect(try accepted["note"] as? String == "full sweep" && keys(box).count == 100, "\(accepted)")
        // Applied, the sweep is no longer due: syncs are incremental again.
        #expect((try sync(box)["note"] as? String)?.hasPrefix("incremental") == true)
    }

    /// A clock that was once ahead left the last full sync in the future: the sweep is due, not
    /// put off until the clock catches up. A cursor value no URL can carry (a megabyte) is bad
    /// data, said before any request, and `sync --full` syncs without it.
    @Test func aFutureFullSyncIsDueAndAWatermarkTooLongToSendIsBadData() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        add(upstream, box)
        _ = try sync(box)
        #expect((try sync(box)["note"] as? String)?.hasPrefix("incremental") == true)
        let db = try Connection(path: box.database)
        try db.execute("UPDATE sync_state SET last_full_at = '2099-01-01T00:00:00.000Z'")
        #expect(try sync(box)["note"] as? String == "full sweep")

        var items = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: upstream.baseURL + "/api/items?per_page=300")!)) as? [[String: Any]])
        items[0]["updated_at"] = "9" + String(repeating: "x", count: 1 << 20)
        try upstream.setItems(items)
        #expect(try sync(box, ["--full"])["outcome"] as? String == "updated")
        let requests = try upstreamRequests(upstream, "/api/items").count
        let wedged = box.cacheInProcess(["sync", "items"])
        #expect(wedged.status == 65, "\(wedged.stderr)")
        #expect(wedged.stderr.contains("the watermark from updated_at is 1048577 bytes long, more than a URL can carry (8192)"), "\(wedged.stderr)")
        #expect(try upstreamRequests(upstream, "/api/items").count == requests)
        // Upstream mends the record: a full sync recovers, and incremental syncs follow.
        items[0]["updated_at"] = "2026-11-01T10:00:00Z"
        try upstream.setItems(items)
        #expect(try sync(box, ["--full"])["outcome"] as? String == "updated")
        #expect((try sync(box)["note"] as? String)?.hasPrefix("incremental") == true)
    }

    /// The watermark is the text the upstream sent: a float epoch keeps its digits (Python's
    /// time.time() style), an integer above 2^63 every digit, so the next sync asks from exactly
    /// there and misses nothing; the lag is taken off digit for digit.
    @Test func theWatermarkKeepsEveryDigitTheUpstreamSent() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let stamps: [Any] = [1700000000.123450, 1700000000.123456, 1699999999.9]
        try upstream.setItems(stamps.enumerated().map { ["id": $0.offset + 1, "updated_at": $0.element] })
        add(upstream, box)
        #expect(try sync(box)["inserted"] as? Int == 3)
        #expect(try status(box)["watermark"] as? String == "1700000000.123456")
        // A record two millionths of a second later: sent 1700000000.12346, it was never fetched.
        try upstream.setItems((stamps + [1700000000.123458]).enumerated().map { ["id": $0.offset + 1, "updated_at": $0.element] })
        let second = try sync(box)
        #expect(try sentSince(upstream, last: 1) == ["1700000000.123456"])
        #expect(try second["inserted"] as? Int == 1 && keys(box).contains("4"), "\(second)")
        #expect(try status(box)["watermark"] as? String == "1700000000.123458")

        // Integers past 2^63, which a REAL rounds to 1.84467440737096e+19.
        let big = box.cacheInProcess(["sources", "add", "big", "--kind", "json", "--url", upstream.baseURL + "/big.json",
                                      "--key", "id", "--since-param", "updated_since", "--cursor-field", "seq", "--lag", "300"])
        #expect(big.status == 0, "\(big.stderr)")
        try Data(#"[{"id": 1, "seq": 18446744073709551616}, {"id": 2, "seq": 18446744073709551615}, {"id": 3, "seq": 9}]"#.utf8)
            .write(to: URL(fileURLWithPath: box.folder + "/big.json"))
        try upstream.serve("/big.json", file: box.folder + "/big.json")
        #expect(box.cacheInProcess(["sync", "big"]).status == 0)
        let watermark = try #require(try box.cacheInProcess(["status", "--json", "big"]).jsonArray().first?["watermark"] as? String)
        #expect(watermark == "18446744073709551616")
        #expect(box.cacheInProcess(["sync", "big"]).status == 0)
        let sent = try upstreamRequests(upstream, "/big.json").last?["query"] as? String
        #expect(sent == "updated_since=18446744073709551316", "\(sent ?? "nothing")")
    }

    @Test func aFullSyncComesEveryFullEveryAndTheLagIsSubtracted() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        add(upstream, box, ["--lag", "1h", "--full-every", "6h"])
        _ = try sync(box)
        let second = try sync(box)
        #expect(second["note"] as? String == "incremental: updated_since=2026-11-28T09:00:00Z", "\(second)")
        #expect(try sentSince(upstream, last: 1) == ["2026-11-28T09:00:00Z"])
        try age(box.database, by: 7 * 3600)  // past --full-every
        #expect(try sync(box)["note"] as? String == "full sweep")
        #expect(try sync(box)["note"] as? String == "incremental: updated_since=2026-11-28T09:00:00Z")

        let listed = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(listed["since_param"] as? String == "updated_since" && listed["cursor_field"] as? String == "updated_at")
        #expect(listed["lag_s"] as? Int == 3600 && listed["full_every_s"] as? Int == 21600)
        #expect(listed["watermark"] as? String == "2026-11-28T10:00:00Z" && listed["last_full_at"] is String)
        let human = box.cacheInProcess(["status"])
        #expect(human.stdout.contains("items: incremental on updated_at, watermark 2026-11-28T10:00:00Z, last full sync "), "\(human.stdout)")

        // Another cursor field: the watermark no longer measures it, so the next sync is full.
        #expect(box.cacheInProcess(["sources", "set", "items", "--cursor-field", "name"]).status == 0)
        #expect(try sync(box)["note"] as? String == "full sweep")
        #expect(try status(box)["watermark"] as? String == "item-99")
    }

    /// A watermark with a `+` (a time zone offset) reaches the server as written, not as a
    /// space; `--no-incremental` makes every sync whole again.
    @Test func aPlusInTheWatermarkIsSentAsItIsAndIncrementalCanBeTurnedOff() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let items: [[String: Any]] = (1...30).map { ["id": $0, "updated_at": "2026-11-\(String(format: "%02d", $0 % 28 + 1))T10:00:00+00:00"] }
        try upstream.setItems(items)
        add(upstream, box)
        #expect(try sync(box)["inserted"] as? Int == 30)
        var changed = items
        changed[4]["updated_at"] = "2026-12-01T00:00:00+00:00"
        try upstream.setItems(changed)
        let second = try sync(box)
        #expect(try sentSince(upstream, last: 1) == ["2026-11-28T10:00:00+00:00"])
        #expect(second["updated"] as? Int == 1, "\(second)")  // the server read the same time, and sent record 5

        #expect(box.cacheInProcess(["sources", "set", "items", "--no-incremental"]).status == 0)
        #expect(try sync(box)["note"] is NSNull)
        #expect(try sentSince(upstream, last: 1) == [nil])
        let listed = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(listed["since_param"] is NSNull && listed["watermark"] is NSNull, "\(listed)")
    }

    @Test(arguments: [
        (["--since-param", "updated_since"], "Incremental syncs need both '--since-param <name>' and '--cursor-field <field>'."),
        (["--lag", "5m"], "Incremental syncs need both '--since-param <name>' and '--cursor-field <field>'."),
        (["--since-param", "a b", "--cursor-field", "x"], "Invalid value 'a b' for '--since-param': expected a query parameter name."),
        (["--since-param", "s", "--cursor-field", "$."], "Invalid value '$.' for '--cursor-field': expected a field name such as updated_at, or meta.updated."),
        (["--since-param", "s", "--cursor-field", "x", "--full-every", "0"], "Invalid value '0' for '--full-every': expected a duration such as 90, 90s, 15m, 2h, 1d or 1h30m."),
    ] as [([String], String)])
    func incompleteOrWrongOptionsAreRefused(_ options: [String], _ message: String) throws {
        let box = try Sandbox()
        let add = box.cacheInProcess(["sources", "add", "x", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id"] + options)
        #expect(add.status == 64 && add.stderr.hasPrefix("cache: " + message.prefix(1).lowercased() + message.dropFirst()), "\(add.stderr)")
        let jokes = box.cacheInProcess(["sources", "add", "j", "--kind", "jokes", "--url", "http://127.0.0.1:9/", "--since-param", "s"])
        #expect(jokes.status == 64 && jokes.stderr.contains("'--since-param' is for json sources"), "\(jokes.stderr)")
    }

    /// The README's incremental recipe, run as written but for the URL's host and path.
    @Test func theReadmesRecipeRunsAsWritten() async throws {
        let readme = Docs.manual
        let start = try #require(readme.range(of: "cache sources add tickets "))
        let command = "sources add tickets " + readme[start.upperBound...].prefix { $0 != "`" }
        var words = PagingStylesTests.shellWords(command)
        let at = try #require(words.firstIndex(of: "--url")) + 1
        let url = try #require(URLComponents(string: words[at]))
        #expect(url.path == "/tickets")
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        words[at] = upstream.baseURL + "/api/items?" + (url.query ?? "")
        #expect(box.cacheInProcess(words).status == 0, "\(words)")
        #expect(box.cacheInProcess(["sync", "tickets"]).status == 0)
        let second = try #require(try box.cacheInProcess(["sync", "tickets", "--json"]).jsonArray().first)
        #expect(second["note"] as? String == "incremental: updated_since=2026-11-28T09:00:00Z", "\(second)")
    }
}
