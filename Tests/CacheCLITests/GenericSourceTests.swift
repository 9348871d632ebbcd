import Foundation
import Testing

/// `--kind json`: any JSON API, through the built binary against the loopback upstream's
/// generic API (GitHub-style Link pages, `{"count", "next", "results"}` pages, a cursor).
@Suite(.gated) struct GenericSourceTests {
    func add(_ box: Sandbox, _ name: String, _ url: String, _ extra: [String]) throws {
        let result = try box.cache(["sources", "add", name, "--kind", "json", "--url", url] + extra)
        #expect(result.status == 0, "\(result.stderr)")
    }

    func count(_ box: Sandbox, _ sql: String) throws -> String? {
        try rows(box.database, sql).first?.values.first
    }

    @Test func githubStylePagesFillOneTableAndAViewWithTheFields() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link", "--ttl", "10m"])
        let sync = try await box.cache("sync", "gh", "--json")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 300)
        #expect(try upstreamRequests(upstream, "/api/items").count == 3)
        #expect(try count(box, "SELECT count(*) FROM records WHERE source = 'gh'") == "300")

        // The view: the key, each top-level scalar field, the nested object's (owner: {id, login}), seen_at, age_s, stale.
        let columns = try rows(box.database, "SELECT name FROM pragma_table_info('cached_gh')").compactMap { $0["name"] }
        #expect(columns == ["key", "id", "name", "price", "in_stock", "updated_at", "owner__id", "owner__login", "seen_at", "age_s", "stale", "pending"])
        #expect(try count(box, "SELECT name FROM cached_gh WHERE key = '42'") == "item-42")
        // --csv has the view's columns; export --csv the same.
        let csv = try await box.cache("list", "gh", "--offline", "--csv", "--limit", "1").stdout.split(separator: "\n")
        #expect(csv.first == "key,id,name,price,in_stock,updated_at,owner__id,owner__login,seen_at,age_s,stale,pending")
        #expect(try await box.cache("export", "gh", "--csv").stdout.split(separator: "\n").count == 301)

        // After the TTL every record is stale, in list --stale and in the view.
        try age(box.database, by: 3600)
        let stale = try await box.cache("list", "gh", "--stale", "--offline", "--json")
        #expect(try stale.jsonArray().count == 300)
        let first = try #require(try stale.jsonArray().first)
        #expect(first["stale"] as? Bool == true && first["seen_at"] is String && first["age_s"] is Int)
        #expect((first["record"] as? [String: Any])?["name"] as? String == "item-1")
        #expect(try count(box, "SELECT count(*) FROM cached_gh WHERE stale = 1") == "300")
    }

    @Test func oneChangedOneDroppedOneAddedAreCountedAndDiffed() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link"])
        #expect(try await box.cache("sync", "gh").status == 0)
        var items = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: upstream.baseURL + "/api/items?per_page=300")!)) as? [[String: Any]])
        items[9]["price"] = 12
        items.removeAll { $0["id"] as? Int == 20 }
        items.append(["id": 301, "name": "item-301", "price": 1.5, "in_stock": true, "updated_at": "2026-11-30T10:00:00Z"])
        let before = items[9]["price"]
        try upstream.setItems(items)
        let sync = try await box.cache("sync", "gh", "--json")
        let report = try #require(try sync.jsonArray().first)
        #expect(report["inserted"] as? Int == 1 && report["updated"] as? Int == 1 && report["deleted"] as? Int == 1, "\(sync.stdout)")
        let diff = try await box.cache("diff", "gh")
        #expect(diff.stdout.contains("~ 10  price ") && diff.stdout.contains(" → 12"), "\(diff.stdout) \(String(describing: before))")
        #expect(diff.stdout.contains("+ 301") && diff.stdout.contains("- 20"))
    }

    @Test func aFailingPageLeavesTheCacheAsItWas() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link"])
        #expect(try await box.cache("sync", "gh").status == 0)
        let before = try rows(box.database, "SELECT key, record, seen_at FROM records ORDER BY key")
        try upstream.setItems(count: 250)
        try upstream.control(["fail_page": 2])
        let sync = try await box.cache("sync", "gh", "--timeout", "5s")
        #expect(sync.status == 75, "\(sync.stderr)")
        #expect(try rows(box.database, "SELECT key, record, seen_at FROM records ORDER BY key") == before)
    }

    @Test func bodyLinksAndCursorsPageToo() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "people", upstream.baseURL + "/api/paged", ["--rows", "$.results", "--key", "id", "--next", "$.next"])
        try add(box, "feed", upstream.baseURL + "/api/cursor?per_page=70",
                ["--rows", "$.data.items", "--key", "id", "--next", "$.meta.cursor", "--next-param", "cursor"])
        #expect(try await box.cache("sync").status == 0)
        #expect(try count(box, "SELECT count(*) FROM records WHERE source = 'people'") == "300")
        #expect(try count(box, "SELECT count(*) FROM records WHERE source = 'feed'") == "300")
        #expect(try upstreamRequests(upstream, "/api/cursor").count == 5)  // 70 a page
    }

    @Test func reachingMaxPagesFailsRatherThanCachingPart() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link", "--max-pages", "2"])
        let sync = try await box.cache("sync", "gh")
        #expect(sync.status == 65 && sync.stderr.contains("more than 2 pages (--max-pages)"), "\(sync.stderr)")
        #expect(try count(box, "SELECT count(*) FROM records") == "0")
    }

    @Test func theSizeCapHoldsForAllPagesTogether() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link", "--max-bytes", "30000"])
        let sync = try await box.cache("sync", "gh")
        #expect(sync.status == 65 && sync.stderr.contains("body larger than the 30000-byte cap"), "\(sync.stderr)")
        #expect(try upstreamRequests(upstream, "/api/items").count >= 2)
        #expect(try count(box, "SELECT count(*) FROM records") == "0")
    }

    @Test func aRateLimitResettingSoonIsWaitedFor() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link"])
        try upstream.rateLimit(status: 429, resetIn: 2)
        let started = ContinuousClock.now
        let sync = try await box.cache("sync", "gh", "--json")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(try sync.jsonArray().first?["retry_after_wait_s"] as? Double ?? 0 > 0)
        #expect(try count(box, "SELECT count(*) FROM records") == "300")
    }

    @Test(arguments: [429, 403])
    func aRateLimitResettingLaterEndsTheSyncUntilTheReset(_ status: Int) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link"])
        try upstream.rateLimit(status: status, resetIn: 7200)
        let started = Date()
        let sync = try await box.cache("sync", "gh")
        #expect(sync.status == 75, "\(sync.stderr)")
        #expect(sync.stderr.contains("rate limited"), "\(sync.stderr)")
        let state = try #require(try await box.cache("status", "gh", "--json").jsonArray().first)
        let next = try #require((state["next_attempt_at"] as? String).flatMap(isoDate))
        #expect(abs(next.timeIntervalSince(started) - 7200) < 30, "\(state)")
        #expect(try upstreamRequests(upstream, "/api/items").count == 1)
    }

    @Test func keyOrderAndSpacingAreNotChanges() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items?per_page=300", ["--key", "id"])
        #expect(try await box.cache("sync", "gh").status == 0)
        let before = try rows(box.database, "SELECT key, record, seen_at FROM records ORDER BY key")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(string: upstream.baseURL + "/api/items?per_page=300")!)) as? [[String: Any]])
        // The same records with their keys in another order: another body, the same data.
        try upstream.setItems(items.map { item in Dictionary(uniqueKeysWithValues: item.sorted { $0.key > $1.key }) })
        let sync = try await box.cache("sync", "gh", "--json")
        #expect(try sync.jsonArray().first?["outcome"] as? String == "unchanged", "\(sync.stdout)")
        #expect(try rows(box.database, "SELECT key, record, seen_at FROM records ORDER BY key") == before)
        #expect(try count(box, "SELECT count(*) FROM changes") == "0")
    }

    @Test(arguments: [
        (#"[{"id": 1, "name": "a"}, {"name": "no key"}]"#, ["--key", "id"], "record 1 has no key field id"),
        (#"[{"id": 1, "name": "a"}, {"id": 1, "name": "b"}]"#, ["--key", "id"], "records 0 and 1 have the same key (1) and different contents"),
        (#"{"count": 3, "results": []}"#, ["--rows", "$.count", "--key", "id"], "--rows $.count points at a number, not at records"),
        (#"{"results": []}"#, ["--rows", "$.data", "--key", "id"], "no records at $.data"),
        (#"[{"user": {"id": 7}}, {"user": {"name": "x"}}]"#, ["--key", "user.id"], "record 1 has no key field user.id"),
    ] as [(String, [String], String)])
    func badDataIsRefusedWithTheIndexAndWritesNothing(_ body: String, _ options: [String], _ message: String) throws {
        let box = try Sandbox()
        let file = box.folder + "/api.json"
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        try add(box, "api", "file://" + file, options)
        let sync = try box.cache("sync", "api")
        #expect(sync.status == 65, "\(sync.stderr)")
        #expect(sync.stderr.contains(message), "\(sync.stderr)")
        #expect(try count(box, "SELECT count(*) FROM records") == "0")
    }

    /// `sources set` changes the layout too; a new key marks the rows stale until the next sync.
    @Test func theLayoutCanBeChangedInPlace() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/paged", ["--rows", "$.results", "--key", "id"])
        #expect(try await box.cache("sync", "gh").status == 0)
        #expect(try count(box, "SELECT count(*) FROM records") == "100")  // one page: no --next yet
        let set = try await box.cache("sources", "set", "gh", "--next", "$.next", "--key", "name", "--max-pages", "5")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stderr.contains("key id → name") && set.stderr.contains("next none → $.next") && set.stderr.contains("max-pages 100 → 5"))
        #expect(try count(box, "SELECT count(*) FROM cached_records WHERE stale = 0") == "0")
        // The cached records were keyed anew from their own fields: the sync adds pages 2 and 3
        // and replaces nothing.
        #expect(try count(box, "SELECT count(*) FROM records WHERE key = 'item-7'") == "1")
        let sync = try await box.cache("sync", "gh", "--json")
        let report = try #require(try sync.jsonArray().first)
        #expect(report["inserted"] as? Int == 200 && report["updated"] as? Int == 0 && report["deleted"] as? Int == 0, "\(sync.stdout)")
        #expect(try count(box, "SELECT count(*) FROM records") == "300")
        // A key two records share is refused, and nothing changes.
        let before = try await box.cache("sources", "list", "--json").stdout
        let shared = try await box.cache("sources", "set", "gh", "--key", "updated_at")
        #expect(shared.status == 78 && shared.stderr.contains("two cached records have the key"), "\(shared.stderr)")
        #expect(try await box.cache("sources", "list", "--json").stdout == before)
        #expect(try count(box, "SELECT min(key) FROM records") == "item-1")
        // Layout options on a source of another kind are refused.
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sources", "set", "bank", "--key", "id").status == 64)
    }

    @Test func theRemovalGuardHoldsAndRemovingTheSourceDropsItsView() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "gh", upstream.baseURL + "/api/items", ["--key", "id", "--next", "link"])
        #expect(try await box.cache("sync", "gh").status == 0)
        try upstream.setItems(count: 10)
        let held = try await box.cache("sync", "gh")
        #expect(held.status == 65 && held.stderr.contains("would remove 290 of 300 cached records"), "\(held.stderr)")
        #expect(try count(box, "SELECT count(*) FROM records") == "300")
        #expect(try await box.cache("sync", "gh", "--accept-removals").status == 0)
        #expect(try count(box, "SELECT count(*) FROM records") == "10")
        #expect(try await box.cache("sources", "remove", "gh", "--yes").status == 0)
        #expect(try count(box, "SELECT count(*) FROM sqlite_schema WHERE name = 'cached_gh'") == "0")
        #expect(try count(box, "SELECT count(*) FROM records") == "0")
    }

    /// From the red-team pass: field names and source names that once broke a source or a
    /// built-in view for good.
    @Test func hostileNamesCannotBreakAViewOrABuiltInOne() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)
        #expect(try await box.cache("sync", "bank").status == 0)
        let file = box.folder + "/odd.json"
        // A NUL, a quote and a backslash in names; a name differing only in case; 300 fields.
        let wide = (0..<300).map { "\"f\($0)\": \($0)" }.joined(separator: ", ")
        try #"[{"id": 1, "a\u0000b": 1, "q\"uote": 2, "back\\slash": 3, "Name": "x", "name": "y", "#.appending(wide + "}]")
            .write(toFile: file, atomically: true, encoding: .utf8)
        // A json source named like the built-in view of transactions, in other case.
        try add(box, "Transactions", "file://" + file, ["--key", "id"])
        let sync = try await box.cache("sync", "Transactions")
        #expect(sync.status == 0, "\(sync.stderr)")
        let view = try #require(try count(box, "SELECT view FROM record_views WHERE source = 'Transactions'"))
        #expect(view == "cached_Transactions_json")
        let columns = try rows(box.database, "SELECT name FROM pragma_table_info('\(view)')").compactMap { $0["name"] }
        #expect(columns.count == 200 + 5 && columns.contains("Name") && !columns.contains("name"))
        #expect(!columns.contains { $0.contains("\"") || $0.contains("\\") || $0.contains("\u{0}") })
        #expect(try await box.cache("list", "Transactions", "--offline", "--csv").status == 0)
        #expect(try await box.cache("list", "bank", "--offline").status == 0)
        #expect(try await box.cache("sources", "remove", "Transactions", "--yes").status == 0)
        #expect(try await box.cache("list", "bank", "--offline").status == 0)  // cached_transactions is still there
        #expect(try count(box, "SELECT count(*) FROM cached_transactions") == "6")
    }

    @Test func anObjectOfManyKeysDecodesInTimeAndARepeatedNameIsRefused() async throws {
        let box = try Sandbox()
        let file = box.folder + "/many.json"
        let fields = (0..<20_000).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        try "[{\"id\": 1, \(fields), \"nested\": {\(fields)}}]".write(toFile: file, atomically: true, encoding: .utf8)
        try add(box, "many", "file://" + file, ["--key", "id"])
        let started = ContinuousClock.now
        #expect(try await box.cache("sync", "many").status == 0)
        #expect(ContinuousClock.now - started < .seconds(60))  // quadratic, it took minutes
        #expect(try count(box, "SELECT json_extract(record, '$.k5') FROM records") == "5")
        #expect(try count(box, "SELECT json_extract(record, '$.nested.k5') FROM records") == "5")
        // One name given twice among them: bad data, named, found in time; the row as it was.
        try "[{\"id\": 1, \"k5\": \"first\", \(fields)}]".write(toFile: file, atomically: true, encoding: .utf8)
        let again = ContinuousClock.now
        let refused = try await box.cache("sync", "many")
        #expect(refused.status == 65 && refused.stderr.contains(#"record 0: "k5" is named twice in one object"#), "\(refused.stderr)")
        #expect(ContinuousClock.now - again < .seconds(60))
        #expect(try count(box, "SELECT json_extract(record, '$.k5') FROM records") == "5")
    }

    @Test func otherHostileResponses() async throws {
        let box = try Sandbox()
        func sync(_ body: String, _ options: [String]) throws -> RunResult {
            let file = box.folder + "/\(UUID().uuidString).json"
            try body.write(toFile: file, atomically: true, encoding: .utf8)
            let name = "s" + String(UUID().uuidString.prefix(8))
            try add(box, name, "file://" + file, options)
            return try box.cache("sync", name)
        }
        // Not JSON at all, with the default --rows $: called what it is.
        let html = try sync("<html>502 Bad Gateway</html>", ["--key", "id"])
        #expect(html.status == 65 && html.stderr.contains("not valid JSON"), "\(html.stderr)")
        // Composite keys whose values hold commas stay apart.
        let commas = try sync(#"[{"id": "a,b", "x": "c"}, {"id": "a", "x": "b,c"}]"#, ["--key", "id,x"])
        #expect(commas.status == 0, "\(commas.stderr)")
        // A number at --next is a cursor, not a page to fetch; blank means the end.
        let number = try sync(#"{"next": 2, "results": [{"id": 1}]}"#, ["--rows", "$.results", "--key", "id", "--next", "$.next"])
        #expect(number.status == 65 && number.stderr.contains("a cursor needs --next-param"), "\(number.stderr)")
        let blank = try sync(#"{"next": "  ", "results": [{"id": 1}]}"#, ["--rows", "$.results", "--key", "id", "--next", "$.next"])
        #expect(blank.status == 0, "\(blank.stderr)")
        // A boolean is not a key.
        let boolean = try sync(#"[{"id": true}]"#, ["--key", "id"])
        #expect(boolean.status == 65 && boolean.stderr.contains("has no key field id holding a string or number"), "\(boolean.stderr)")
    }

    @Test func theJokesAPIDescribedAsJSON() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try add(box, "jokes", upstream.baseURL + "/jokes/ten", ["--rows", "$", "--key", "id", "--mode", "merge"])
        #expect(try await box.cache("sync", "jokes").status == 0)
        #expect(try count(box, "SELECT count(*) FROM cached_jokes") == "0")  // the built-in kind's view is not used
        // Its view is cached_jokes_json: cached_jokes is the built-in kind's.
        #expect(try count(box, "SELECT count(*) FROM cached_jokes_json WHERE setup IS NOT NULL AND punchline IS NOT NULL") == "10")
        let listed = try await box.cache("list", "jokes", "--offline", "--columns", "setup")
        #expect(listed.status == 0 && listed.stdout.contains("KEY  setup"), "\(listed.stdout)")
        #expect(try await box.cache("list", "jokes", "--offline", "--columns", "nope").status == 64)
    }
}

/// An ISO 8601 time with milliseconds, as the cache records times.
private func isoDate(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// One rule for keys in every kind: compared by their bytes, as SQLite compares them. `é` and
/// `e` + U+0301 are two records in a json source and two rows of a csv table, synced, kept and
/// re-synced as two; and a path that indexes an array is refused, not read as a key's name.
@Suite struct KeyRulesTests {
    static let composed = "caf\u{E9}", decomposed = "cafe\u{301}"

    @Test func keysThatLookAlikeButDifferInTheirBytesAreTwoRowsInEveryKind() throws {
        #expect(Self.composed == Self.decomposed)  // Swift's String calls them one
        let box = try Sandbox()
        let json = box.folder + "/records.json", csv = box.folder + "/table.csv"
        func write(_ version: Int) throws {
            try Data("[{\"id\": \"\(Self.composed)\", \"v\": \(version)}, {\"id\": \"\(Self.decomposed)\", \"v\": \(version * 10)}]".utf8)
                .write(to: URL(fileURLWithPath: json))
            try Data("id,v\n\(Self.composed),\(version)\n\(Self.decomposed),\(version * 10)\n".utf8).write(to: URL(fileURLWithPath: csv))
        }
        try write(1)
        #expect(box.cacheInProcess(["sources", "add", "records", "--kind", "json", "--key", "id", "--url", "file://" + json]).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "table", "--kind", "csv", "--key", "id", "--url", "file://" + csv]).status == 0)
        for version in [1, 2] {
            try write(version)
            for source in ["records", "table"] {
                let synced = box.cacheInProcess(["sync", source])
                #expect(synced.status == 0, "\(source) v\(version): \(synced.stderr)")
                let values = try rows(box.database, "SELECT key, json_extract(record, '$.v') AS v FROM records WHERE source = '\(source)' ORDER BY key")
                #expect(values.map { Array($0["key"]!.utf8) } == [Array(Self.decomposed.utf8), Array(Self.composed.utf8)].sorted { $0.lexicographicallyPrecedes($1) },
                        "\(source) v\(version): \(values)")
                #expect(Set(values.compactMap { $0["v"] }) == ["\(version)", "\(version * 10)"], "\(source) v\(version): \(values)")
            }
        }
        // Two header names that look alike are two columns, as two member names of a json object are.
        let header = box.folder + "/header.csv"
        try Data("id,\(Self.composed),\(Self.decomposed)\n1,a,b\n".utf8).write(to: URL(fileURLWithPath: header))
        #expect(box.cacheInProcess(["sources", "add", "header", "--kind", "csv", "--key", "id", "--url", "file://" + header]).status == 0)
        let synced = box.cacheInProcess(["sync", "header"])
        #expect(synced.status == 0, "\(synced.stderr)")
    }

    /// Two field names that differ only in their bytes are two fields to `diff` and `log`.
    @Test func lookAlikeFieldNamesAreTwoFieldsInTheChangeLog() throws {
        let box = try Sandbox()
        let file = try box.syncedFileSource("fields", "[{\"id\": 1, \"\(Self.composed)\": \"a\", \"\(Self.decomposed)\": \"b\"}]")
        try Data("[{\"id\": 1, \"\(Self.composed)\": \"a\", \"\(Self.decomposed)\": \"changed\"}]".utf8).write(to: URL(fileURLWithPath: file))
        #expect(box.cacheInProcess(["sync", "fields"]).status == 0)
        let versions = try box.cacheInProcess(["log", "fields", "1", "--json"]).jsonArray()
        let fields = ((versions.first?["fields"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }
        #expect(fields.map { Array($0.utf8) } == [Array(Self.decomposed.utf8)], "\(versions)")
        #expect(box.cacheInProcess(["diff", "fields"]).stdout.contains("\"b\" → \"changed\""))
    }

    @Test(arguments: [["--next", "$.a[0]"], ["--next", "$.a["], ["--next", "$.a[-1]"], ["--rows", "$.data[0]"],
                      ["--has-more", "$.meta[0].more"], ["--key", "ids[0]"]])
    func aPathThatIndexesAnArrayIsRefused(_ option: [String]) throws {
        let box = try Sandbox()
        let add = box.cacheInProcess(["sources", "add", "x", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id"]
                                     .filter { option[0] != "--key" || ($0 != "--key" && $0 != "id") } + option)
        #expect(add.status == 64 && add.stderr.contains("paths do not index arrays"), "\(option): \(add.stderr)")
        // A key whose name holds brackets is written quoted.
        #expect(box.cacheInProcess(["sources", "add", "y", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id", "--rows", "$['data[0]']"]).status == 0)
    }
}

/// What new users met, said with what to do: records with no key field name their fields and
/// a composite key; a CSV header split by another delimiter names it; a search word holding
/// punctuation works unquoted, and a hit says which field matched.
@Suite struct NewUserHintsTests {
    @Test func hintsSayWhatToDo() throws {
        let box = try Sandbox()
        let json = box.folder + "/days.json", csv = box.folder + "/semi.csv"
        try Data(#"[{"code": "PAR", "day": "2026-12-01", "note": "knock-knock, who is there? mail me@example.com"}]"#.utf8).write(to: URL(fileURLWithPath: json))
        try Data("id;name;price\n1;a;2\n".utf8).write(to: URL(fileURLWithPath: csv))
        #expect(box.cacheInProcess(["sources", "add", "days", "--kind", "json", "--key", "id", "--url", "file://" + json]).status == 0)
        let keyless = box.cacheInProcess(["sync", "days"])
        #expect(keyless.status == 65 && keyless.stderr.contains("record 0 has no key field id (its fields: code, day, note)")
                && keyless.stderr.contains("such as --key code,day"), "\(keyless.stderr)")
        #expect(box.cacheInProcess(["sources", "add", "semi", "--kind", "csv", "--key", "id", "--url", "file://" + csv]).status == 0)
        let semi = box.cacheInProcess(["sync", "semi"])
        #expect(semi.status == 65 && semi.stderr.contains("the header looks separated by ';': 'cache sources set NAME --delimiter ';''"), "\(semi.stderr)")
        #expect(box.cacheInProcess(["sources", "set", "semi", "--delimiter", ";"]).status == 0)
        #expect(box.cacheInProcess(["sync", "semi"]).status == 0)

        #expect(box.cacheInProcess(["sources", "set", "days", "--key", "code,day"]).status == 0)
        #expect(box.cacheInProcess(["sync", "days"]).status == 0)
        for query in ["knock-knock", "me@example.com", "example.com", "(knock-knock OR nothing)", "knock-kn*", "NEAR(knock who, 5)", "NEAR(knock who,5)"] {
            let found = box.cacheInProcess(["search", "days", query, "--json"])
            #expect(found.status == 0, "\(query): \(found.stderr)")
            let hit = try found.jsonArray().first
            #expect(hit?["field"] as? String == "note", "\(query): \(found.stdout)")
        }
        let table = box.cacheInProcess(["search", "days", "who"])
        #expect(table.stdout.hasPrefix("KEY") && table.stdout.contains(" note "), "\(table.stdout)")
    }

    /// The same record twice (a page overlapping the one before, a repeated CSV line) is cached
    /// once, never without a word: the sync says how many came again.
    @Test func repeatedRecordsAreCachedOnceAndSaidSo() throws {
        let box = try Sandbox()
        let json = box.folder + "/twice.json", csv = box.folder + "/twice.csv"
        try Data(#"[{"id": 1, "a": 1}, {"id": 2}, {"id": 1, "a": 1}, {"id": 2}]"#.utf8).write(to: URL(fileURLWithPath: json))
        try Data("id,n\n1,a\n1,a\n2,b\n".utf8).write(to: URL(fileURLWithPath: csv))
        #expect(box.cacheInProcess(["sources", "add", "twice", "--kind", "json", "--key", "id", "--url", "file://" + json]).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "table", "--kind", "csv", "--key", "id", "--url", "file://" + csv]).status == 0)
        let json1 = box.cacheInProcess(["sync", "twice"])
        #expect(json1.stdout.contains("updated (2 inserted, 0 updated, 0 deleted)") && json1.stdout.contains("; 2 records came more than once, the same each time, and are cached once"), "\(json1.stdout)")
        let table = try #require(try box.cacheInProcess(["sync", "table", "--json"]).jsonArray().first)
        #expect(table["repeated"] as? Int == 1 && table["inserted"] as? Int == 2, "\(table)")
    }
}
