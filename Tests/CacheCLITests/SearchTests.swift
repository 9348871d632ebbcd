import Foundation
import OfflineCache
import Testing

/// `cache search` over the FTS5 index every reconcile keeps once it is built: it follows updates and removals
/// in the same transaction, ignores case and accents, says what is wrong with a query FTS5
/// cannot parse (64), and `check` and `reindex` look after it. The commands run in-process
/// against the loopback upstream.
@Suite(.gated) struct SearchTests {
    func serveJokes(_ box: Sandbox, _ upstream: LoopbackUpstream, _ jokes: [(Int, String, String)]) throws {
        let file = box.folder + "/jokes.json"
        let objects = jokes.map { ["id": $0.0, "type": "general", "setup": $0.1, "punchline": $0.2] as [String: Any] }
        try JSONSerialization.data(withJSONObject: objects).write(to: URL(fileURLWithPath: file))
        try upstream.serve("/search-jokes", file: file)
    }

    /// Syncs `name`; the first time, builds its index too (as its first search would), so that
    /// these tests see the syncs after keep a built index in step.
    func sync(_ box: Sandbox, _ name: String) {
        let result = box.cacheInProcess(["sync", name])
        #expect(result.status == 0, "\(result.stderr)")
        let built = box.cacheInProcess(["sql", "SELECT count(*) AS n FROM search_built WHERE source = '\(name)'", "--json"])
        if (try? built.jsonArray().first?["n"] as? Int) == 0, box.cacheInProcess(["sources", "list", "--json"]).stdout.contains("\"search\": true") {
            #expect(box.cacheInProcess(["reindex", name]).status == 0)
        }
    }

    /// The keys (or ids) of what `search` finds, best first.
    func found(_ box: Sandbox, _ name: String, _ query: String) throws -> [String] {
        let result = box.cacheInProcess(["search", name, query, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonArray().map { "\($0["key"] ?? $0["id"] ?? "?")" }
    }

    /// A source nobody searches pays nothing for search at sync time: its index is built on its
    /// first search (or by `reindex`), then kept in step; `sources list --json` says which; a
    /// read-only copy cannot build one, and says where to.
    @Test func theIndexIsBuiltOnTheFirstSearchAndKeptFromThen() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me.")])
        for name in ["jokes", "more"] {
            #expect(box.cacheInProcess(["sources", "add", name, "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace"]).status == 0)
            #expect(box.cacheInProcess(["sync", name]).status == 0)
        }
        func documents() throws -> Int {
            try box.cacheInProcess(["sql", "SELECT count(*) AS n FROM search_docs", "--json"]).jsonArray().first?["n"] as? Int ?? -1
        }
        func states() throws -> [String] {
            try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().map { "\($0["name"] ?? "") \($0["search_index"] ?? "")" }
        }
        #expect(try documents() == 0, "a sync built an index nobody asked for")
        #expect(try states() == ["jokes on first search", "more on first search"])

        // A read-only copy cannot build it: it says where to.
        let copy = box.folder + "/copy.sqlite3"
        #expect(try await box.run("/usr/bin/sqlite3", [box.database, ".backup '\(copy)'"]).status == 0)
        let refused = box.cacheInProcess(["--read-only", "--db", copy, "search", "jokes", "why"])
        #expect(refused.status == 78 && refused.stderr.contains("'cache reindex jokes' where the cache is written"), "\(refused.stderr)")

        // The first search builds it, and answers.
        #expect(try found(box, "jokes", "why") == ["1"])
        #expect(try documents() == 2 && states() == ["jokes built", "more on first search"])
        // The syncs after keep it in step.
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me."), (3, "When?", "Now.")])
        #expect(box.cacheInProcess(["sync", "jokes"]).status == 0)
        #expect(try found(box, "jokes", "when") == ["3"])
        #expect(box.cacheInProcess(["sync", "more"]).status == 0)
        #expect(try documents() == 3, "the unsearched source's sync indexed it")
        // reindex builds it ahead of a search; search off lets it go, on again waits for a search.
        #expect(box.cacheInProcess(["reindex", "more"]).status == 0)
        #expect(try documents() == 6 && states() == ["jokes built", "more built"])
        #expect(box.cacheInProcess(["sources", "set", "more", "--search", "off"]).status == 0)
        #expect(box.cacheInProcess(["sources", "set", "more", "--search", "on"]).status == 0)
        #expect(try documents() == 3 && states() == ["jokes built", "more on first search"])
        #expect(box.cacheInProcess(["check"]).status == 0)
        // An index made again whole (FTS5's config damaged) still builds the source named.
        let db = try Connection(path: box.database)
        try db.execute("DELETE FROM search_index_config")
        #expect(box.cacheInProcess(["reindex", "more"]).status == 0)
        #expect(try documents() == 6 && states() == ["jokes built", "more built"])
        #expect(try found(box, "more", "when") == ["3"])
    }

    @Test func searchFollowsUpdatesAndRemovals() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace")
        try serveJokes(box, upstream, [(1, "Why did the chicken cross the road?", "To get to the other side."),
                                       (2, "What do you call a bear with no teeth?", "A gummy bear."),
                                       (3, "Where does a chicken order coffee?", "At the Café Poulet.")])
        sync(box, "jokes")
        #expect(try found(box, "jokes", "chicken") == ["1", "3"] || (try found(box, "jokes", "chicken")) == ["3", "1"])
        #expect(try found(box, "jokes", "gummy") == ["2"])
        // Case and accents do not matter, either way round.
        #expect(try found(box, "jokes", "CAFE") == ["3"])
        #expect(try found(box, "jokes", "poulét") == ["3"])
        // Phrases, prefixes and operators are FTS5's.
        #expect(try found(box, "jokes", "\"cross the road\"") == ["1"])
        #expect(try found(box, "jokes", "gumm*") == ["2"])
        #expect(try found(box, "jokes", "chicken NOT coffee") == ["1"])

        // Joke 1 rewritten and joke 2 removed: found by the new words, not the old, and gone.
        try serveJokes(box, upstream, [(1, "Why did the duck cross the pond?", "To get to the other side."),
                                       (3, "Where does a chicken order coffee?", "At the Café Poulet."),
                                       (4, "What is a bear's favourite drink?", "Koka-Kola.")])
        sync(box, "jokes")
        #expect(try found(box, "jokes", "chicken") == ["3"])
        #expect(try found(box, "jokes", "duck") == ["1"])
        #expect(try found(box, "jokes", "gummy") == [])
        #expect(try found(box, "jokes", "bear") == ["4"])

        // --json: the id, the row as list --json shows it, a snippet and the rank; --limit.
        let hit = try #require(try box.cacheInProcess(["search", "jokes", "duck", "--json"]).jsonArray().first)
        #expect(hit["id"] as? Int == 1)
        let row = try #require(hit["row"] as? [String: Any])
        let listed = try #require(try box.cacheInProcess(["list", "jokes", "--json", "--offline"]).jsonArray().first { $0["id"] as? Int == 1 })
        for field in ["id", "type", "setup", "punchline", "source", "seen_at", "stale"] {
            #expect("\(row[field] ?? "-")" == "\(listed[field] ?? "+")", "\(field)")
        }
        #expect(hit["snippet"] as? String == "Why did the [duck] cross the pond? To get to the other side.")
        #expect((hit["rank"] as? Double).map { $0 < 0 } == true)
        #expect(try box.cacheInProcess(["search", "jokes", "the", "--limit", "1", "--json"]).jsonArray().count == 1)
        let table = box.cacheInProcess(["search", "jokes", "duck"]).stdout
        #expect(table.hasPrefix("ID  FIELD  MATCH\n1   setup  Why did the [duck] cross"), "\(table)")
        #expect(try box.cacheInProcess(["search", "jokes", "duck", "--json"]).jsonArray().first?["field"] as? String == "setup")
        let none = box.cacheInProcess(["search", "jokes", "walrus"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("Nothing in 'jokes' matches walrus"))
    }

    @Test func aQueryFTS5CannotParseIsAUsageError() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace")
        try serveJokes(box, upstream, [(1, "Why?", "Because.")])
        sync(box, "jokes")
        for query in ["AND", "\"unterminated", "why AND", "nosuchcolumn: why", "(why"] {
            let result = box.cacheInProcess(["search", "jokes", query])
            #expect(result.status == 64, "\(query): \(result.stderr)")
            #expect(result.stderr.contains("is not one FTS5 can read ("), "\(query): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(box.cacheInProcess(["search", "nosource", "why"]).status == 66)
    }

    /// Transactions by vendor (each hit a transaction, with its id), and json records by every
    /// string they hold, nested ones too.
    @Test func transactionsAndRecordsAreSearchedByTheirText() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100", "--key", "id")
        try upstream.setItems([["id": 1, "name": "Crème brûlée", "maker": ["city": "Lyon"], "count": 3],
                               ["id": 2, "name": "Apple pie", "tags": ["dessert", "lyon-style"]]])
        sync(box, "bank")
        sync(box, "items")
        let hits = try box.cacheInProcess(["search", "bank", "whole", "--json"]).jsonArray()
        let ids = Set(try box.cacheInProcess(["list", "bank", "--json", "--offline"]).jsonArray()
            .filter { $0["vendor"] as? String == "Whole Foods" }.compactMap { $0["id"] as? String })
        #expect(!ids.isEmpty && Set(hits.compactMap { $0["id"] as? String }) == ids)
        #expect(hits.allSatisfy { ($0["row"] as? [String: Any])?["vendor"] as? String == "Whole Foods" })
        #expect(hits.first?["snippet"] as? String == "[Whole] Foods")

        #expect(try found(box, "items", "creme") == ["1"])
        #expect(try found(box, "items", "lyon") == ["1", "2"] || (try found(box, "items", "lyon")) == ["2", "1"])
        #expect(try found(box, "items", "dessert") == ["2"])
        // Numbers and field names are not text to search.
        #expect(try found(box, "items", "maker") == [])
        #expect(try found(box, "items", "3") == [])

        // Uber removed from the account: its transactions are not found any more.
        #expect(try found(box, "bank", "uber").count > 0)
        let account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        try upstream.setAccount(try changedAccount(account))
        sync(box, "bank")
        #expect(try found(box, "bank", "uber") == [])
        #expect(try found(box, "bank", "lyft").count == 1)
        #expect(box.cacheInProcess(["check"]).status == 0)
        // One of a vendor's transactions gone and another come: its document stays, and so do
        // the documents of vendors whose transactions only changed.
        var body = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var transactions = try #require(body["transactions"] as? [[String: Any]])
        let vendors = Set(transactions.compactMap { $0["vendor"] as? String })
        let starbucks = transactions.indices.filter { transactions[$0]["vendor"] as? String == "Starbucks" }
        #expect(starbucks.count == 2)
        transactions.remove(at: starbucks[0])
        transactions.append(["type": 1, "vendor": "Lyft", "amount": 8.75, "date": "2026-11-30 02:03:04"])
        let payroll = try #require(transactions.firstIndex { $0["vendor"] as? String == "Payroll" })
        transactions[payroll]["amount"] = 2100
        body["transactions"] = transactions
        try upstream.setAccount(body)
        sync(box, "bank")
        #expect(box.cacheInProcess(["check"]).status == 0)
        #expect(try found(box, "bank", "lyft").count == 2)
        #expect(try found(box, "bank", "starbucks").count == 1)
        #expect(try found(box, "bank", "payroll").count == 1)
        let db = try Connection(path: box.database)
        #expect(Set(try db.query("SELECT doc FROM search_docs WHERE source = 'bank'") { $0.text(0) ?? "" }) == vendors)
    }

    /// `check` compares the index with the rows and names what differs (74); `reindex` mends it.
    @Test func checkFindsAnIndexOutOfStepAndReindexMendsIt() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace")
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me.")])
        sync(box, "jokes")
        let healthy = box.cacheInProcess(["check"])
        #expect(healthy.status == 0 && healthy.stdout.contains("search index: ok\n"), "\(healthy.stdout)")

        // An edit behind the cache's back: one joke's text changed, another's document lost.
        let db = try Connection(path: box.database)
        try db.execute("UPDATE jokes SET setup = 'Whom?' WHERE id = 2")
        try db.execute("DELETE FROM search_docs WHERE doc = '1'")
        let damaged = box.cacheInProcess(["check"])
        #expect(damaged.status == 74, "\(damaged.stdout)\(damaged.stderr)")
        #expect(damaged.stdout.contains("search index: 2 problem(s)"))
        #expect(damaged.stderr.contains("1 document of 'jokes' missing from the search index"), "\(damaged.stderr)")
        #expect(damaged.stderr.contains("1 document of 'jokes' out of date in the search index"), "\(damaged.stderr)")
        #expect(damaged.stderr.contains("'cache reindex' (of every source) builds it again"))
        #expect(try found(box, "jokes", "whom") == [])

        let reindexed = box.cacheInProcess(["reindex", "jokes"])
        #expect(reindexed.status == 0 && reindexed.stderr.contains("Indexed 'jokes' for search."), "\(reindexed.stderr)")
        #expect(box.cacheInProcess(["check"]).status == 0)
        #expect(try found(box, "jokes", "whom") == ["2"])
        #expect(try found(box, "jokes", "why") == ["1"])

        // `damage` done to the index (`done` holds it so): check says it is damaged, and reindex
        // of all mends it.
        func damagedThenMended(_ damage: String, done: () throws -> Bool = { true }) throws {
            try db.execute(damage)
            #expect(try done(), "\(damage)")
            let damaged = box.cacheInProcess(["check"])
            #expect(damaged.status == 74 && damaged.stderr.contains("the search index is damaged"), "\(damage): \(damaged.stderr)")
            #expect(box.cacheInProcess(["reindex"]).status == 0)
            #expect(box.cacheInProcess(["check"]).status == 0)
        }
        // An entry that belongs to no document: FTS5's check against the documents' text finds
        // it, and reindex of all takes it out.
        try damagedThenMended("INSERT INTO search_index (rowid, text) VALUES (999, 'orphan')") {
            try db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH 'orphan'") == 1
        }
        #expect(try db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH 'orphan'") == 0)
        // A document's text changed behind the index's back: the same.
        try damagedThenMended("UPDATE search_docs SET text = 'Whom? Me. Really.' WHERE doc = '2'")
        #expect(try found(box, "jokes", "whom") == ["2"])
        // FTS5's own index damaged (a block zeroed): the same.
        try damagedThenMended("UPDATE search_index_data SET block = zeroblob(length(block)) WHERE id = (SELECT max(id) FROM search_index_data)")
        #expect(try found(box, "jokes", "whom") == ["2"])
        // Damaged again, and a reindex of one source: FTS5's shared index is rebuilt all the same.
        // The source holds every document, so its documents' table is made again: as it was.
        let documentsSchema = "SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'search_docs' ORDER BY name"
        let schemaBefore = try db.query(documentsSchema) { [$0.text(0), $0.text(1), $0.text(2)] }
        try db.execute("UPDATE search_index_data SET block = zeroblob(length(block)) WHERE id = (SELECT max(id) FROM search_index_data)")
        #expect(box.cacheInProcess(["reindex", "jokes"]).status == 0)
        #expect(box.cacheInProcess(["check"]).status == 0)
        #expect(try db.query(documentsSchema) { [$0.text(0), $0.text(1), $0.text(2)] } == schemaBefore)
        #expect(schemaBefore.count == 4)

        // A removed source takes its documents out of the index with it.
        #expect(box.cacheInProcess(["sources", "remove", "jokes", "--yes"]).status == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_index") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs") == 0)
    }

    /// `--search off` keeps no index for a source (search says how to turn it on); turning it
    /// on indexes the rows already cached, and off again lets them go.
    @Test func searchCanBeTurnedOffAndOnPerSource() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(box.cacheInProcess(["sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes",
                                    "--search", "off"]).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "x", "--kind", "jokes", "--url", "http://h/", "--search", "maybe"]).status == 64)
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me.")])
        sync(box, "jokes")
        let db = try Connection(path: box.database)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs") == 0)
        let off = box.cacheInProcess(["search", "jokes", "why"])
        #expect(off.status == 64 && off.stderr.contains("'cache sources set jokes --search on' indexes its rows"), "\(off.stderr)")
        #expect(box.cacheInProcess(["check"]).status == 0)
        #expect(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first?["search"] as? Bool == false)

        #expect(box.cacheInProcess(["sources", "set", "jokes", "--search", "on"]).status == 0)
        #expect(try found(box, "jokes", "why") == ["1"])
        #expect(box.cacheInProcess(["check"]).status == 0)
        #expect(box.cacheInProcess(["sources", "set", "jokes", "--search", "off"]).status == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_index") == 0)
        #expect(box.cacheInProcess(["check"]).status == 0)
        // A source with search off keeps no documents, whatever happens to its rows; reindex
        // takes out any it has.
        #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100",
                                    "--key", "id", "--search", "off"]).status == 0)
        try upstream.setItems([["id": 1, "name": "one"]])
        sync(box, "items")
        #expect(box.cacheInProcess(["sources", "set", "items", "--key", "name"]).status == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs") == 0)
        #expect(box.cacheInProcess(["check"]).status == 0)
        try db.execute("INSERT INTO search_docs (source, doc) VALUES ('items', 'stray')")
        #expect(box.cacheInProcess(["check"]).status == 74)
        #expect(box.cacheInProcess(["reindex", "items"]).stderr.contains("Search is off for 'items': it keeps no index."))
        #expect(box.cacheInProcess(["check"]).status == 0)
    }

    /// `sync --plan` and a sync the removal guard holds write nothing, the index included.
    @Test func aPlanAndAHeldSyncLeaveTheIndexAlone() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace")
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me."), (3, "What?", "That.")])
        #expect(box.cacheInProcess(["sync", "jokes", "--plan"]).status == 0)
        let db = try Connection(path: box.database)
        #expect(try db.scalarInt("SELECT count(*) FROM search_docs") == 0)
        sync(box, "jokes")
        try serveJokes(box, upstream, [(4, "When?", "Now.")])
        #expect(box.cacheInProcess(["sync", "jokes"]).status == 65)  // held: it would remove all three
        #expect(try found(box, "jokes", "why") == ["1"])
        #expect(try found(box, "jokes", "when") == [])
        #expect(box.cacheInProcess(["check"]).status == 0)
    }

    /// Every kind of damage to the index: FTS5's config row, a shadow table gone, a data block
    /// zeroed. None stops the rows: a sync lands them and records the damage, which `check`,
    /// `status` and `metrics` report; `search` says the index is damaged (74, not a usage
    /// error); `sources set --search off` and `sources remove` still work; `reindex` mends it.
    @Test(arguments: [
        ("FTS5's config row", "UPDATE search_index_config SET v = 99 WHERE k = 'version'"),
        ("its config table gone", "DROP TABLE search_index_config"),
        ("its data table gone", "DROP TABLE search_index_data"),
        ("a data block zeroed", "UPDATE search_index_data SET block = zeroblob(length(block)) WHERE id > 10"),
        ("its definition", "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, 'unicode61', 'nosuch') WHERE name = 'search_index'; PRAGMA writable_schema = RESET"),
    ])
    func damageToTheIndexNeverStopsTheRowsAndReindexMendsIt(_ what: String, _ damage: String) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        for name in ["jokes", "other"] {
            #expect(box.cacheInProcess(["sources", "add", name, "--kind", "jokes", "--url", upstream.baseURL + "/search-jokes", "--mode", "replace"]).status == 0)
        }
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Who?", "Me.")])
        sync(box, "jokes")
        sync(box, "other")
        let db = try Connection(path: box.database)
        // What the index is made again from is what migration 25 left.
        #expect(try db.scalarText("SELECT sql FROM sqlite_schema WHERE name = 'search_index'") == SearchIndex.definition)
        try db.execute(damage)

        // The rows sync all the same.
        try serveJokes(box, upstream, [(1, "Why?", "Because."), (2, "Whom?", "Me."), (3, "When?", "Now.")])
        let synced = box.cacheInProcess(["sync", "jokes"])
        #expect(synced.status == 0, "\(what): \(synced.stderr)")
        #expect(try box.cacheInProcess(["list", "jokes", "--json", "--offline"]).jsonArray().count == 3, "\(what)")
        let searched = box.cacheInProcess(["search", "jokes", "when"])
        if what != "a data block zeroed" {  // a zeroed block may lie where this query never looks
            #expect(searched.status == 74 && searched.stderr.contains("the search index is damaged"), "\(what): \(searched.status) \(searched.stderr)")
        }
        let checked = box.cacheInProcess(["check"])
        #expect(checked.status == 74 && checked.stderr.contains("search index"), "\(what): \(checked.stderr)")
        if what != "a data block zeroed" {
            // A replica's check cannot run FTS5's own (it writes), and finds the index unreadable all the same.
            let replica = box.cacheInProcess(["--read-only", "check"])
            #expect(replica.status == 74 && replica.stderr.contains("the search index cannot be read"), "\(what): \(replica.stderr)")
            #expect(checked.stderr.contains("a sync of 'jokes' at"), "\(what): \(checked.stderr)")
            let status = box.cacheInProcess(["status"])
            #expect(status.stdout.contains("jokes: rows synced, but the search index is out of step since"), "\(what): \(status.stdout)")
            #expect(try box.cacheInProcess(["status", "--json"]).jsonArray().first?["index_damaged_at"] is String, "\(what)")
            #expect(box.cacheInProcess(["metrics"]).stdout.contains("cache_search_index_damaged{source=\"jokes\"} 1"), "\(what)")
        }
        // Settings and removals are never refused for the index's sake.
        #expect(box.cacheInProcess(["sources", "set", "other", "--search", "off"]).status == 0, "\(what)")
        #expect(box.cacheInProcess(["sources", "set", "other", "--search", "on"]).status == 0, "\(what)")
        let removed = box.cacheInProcess(["sources", "remove", "other", "--yes"])
        #expect(removed.status == 0, "\(what): \(removed.stderr)")

        let reindexed = box.cacheInProcess(["reindex", "jokes"])
        #expect(reindexed.status == 0, "\(what): \(reindexed.stderr)")
        let healthy = box.cacheInProcess(["check"])
        #expect(healthy.status == 0, "\(what): \(healthy.stdout) \(healthy.stderr)")
        #expect(try found(box, "jokes", "when") == ["3"] && found(box, "jokes", "whom") == ["2"], "\(what)")
        #expect(box.cacheInProcess(["metrics"]).stdout.contains("cache_search_index_damaged{source=\"jokes\"} 0"), "\(what)")
        #expect(try box.cacheInProcess(["status", "--json"]).jsonArray().first?["index_damaged_at"] is NSNull, "\(what)")
        #expect(try db.scalarText("SELECT sql FROM sqlite_schema WHERE name = 'search_index'") == SearchIndex.definition)
    }

    /// `reindex NAME` racing `sources remove` of another source (which drops that source's view,
    /// a change of schema): both succeed, and nothing is called damaged.
    @Test func reindexRacingTheRemovalOfAnotherSourceSucceeds() async throws {
        let box = try Sandbox()
        let records = (0..<5_000).map { ["id": $0, "text": "word\($0) and more words"] as [String: Any] }
        try JSONSerialization.data(withJSONObject: records).write(to: URL(fileURLWithPath: box.folder + "/big.json"))
        try Data(#"[{"id": 1, "text": "small"}]"#.utf8).write(to: URL(fileURLWithPath: box.folder + "/small.json"))
        #expect(box.cacheInProcess(["sources", "add", "big", "--kind", "json", "--key", "id", "--url", "file://" + box.folder + "/big.json"]).status == 0)
        sync(box, "big")
        for round in 0..<8 {
            #expect(box.cacheInProcess(["sources", "add", "small\(round)", "--kind", "json", "--key", "id", "--url", "file://" + box.folder + "/small.json"]).status == 0)
            sync(box, "small\(round)")
        }
        for round in 0..<8 {
            let reindex = try box.start(["reindex", "big"])
            let remove = try box.start(["sources", "remove", "small\(round)", "--yes"])
            let (reindexed, removed) = (await reindex.finished().0, await remove.finished().0)
            #expect(reindexed.status == 0 && reindexed.stderr == "Indexed 'big' for search.\n", "round \(round): \(reindexed.stderr)")
            #expect(removed.status == 0, "round \(round): \(removed.stderr)")
        }
        #expect(box.cacheInProcess(["check"]).status == 0)
    }

    /// A damaged page of the index itself (SQLite's own "malformed", where FTS5's checks above
    /// meet a readable page): SQLite then refuses every write of the transaction, so the sync
    /// runs again without the index, lands its rows, and records the damage.
    @Test func aDamagedPageOfTheIndexNeverStopsTheRows() async throws {
        let box = try Sandbox()
        let file = box.folder + "/notes.json"
        func write(_ version: Int) throws {
            let records = (0..<400).map { ["id": $0, "text": "note \($0) version \(version) " + String(repeating: "word\($0 % 7) ", count: 20)] as [String: Any] }
            try JSONSerialization.data(withJSONObject: records).write(to: URL(fileURLWithPath: file))
        }
        try write(1)
        #expect(box.cacheInProcess(["sources", "add", "notes", "--kind", "json", "--key", "id", "--url", "file://" + file]).status == 0)
        sync(box, "notes")
        // The root page of the index's data overwritten: the file's own page is damaged there.
        func damage() throws -> Int64 {
            let (root, pageSize) = try { () throws -> (Int64, Int64) in
                let db = try Connection(path: box.database, readOnly: true)
                return (try #require(try db.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'search_index_data'")),
                        try #require(try db.scalarInt("PRAGMA page_size")))
            }()
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: box.database))
            try handle.seek(toOffset: UInt64((root - 1) * pageSize))
            try handle.write(contentsOf: Data(repeating: 0xFF, count: Int(pageSize)))
            try handle.close()
            return root
        }
        let root = try damage()

        try write(2)
        let synced = box.cacheInProcess(["sync", "notes"])
        #expect(synced.status == 0 && synced.stdout.contains("400 updated"), "\(synced.stdout) \(synced.stderr)")
        let listed = try box.cacheInProcess(["list", "notes", "--json", "--offline", "--limit", "1"]).jsonArray()
        #expect((listed.first?["record"] as? [String: Any])?["text"].map { "\($0)".contains("version 2") } == true, "\(listed)")
        #expect(try box.cacheInProcess(["status", "--json"]).jsonArray().first?["index_damaged_at"] is String)
        // check says what is damaged (it no longer stops at the first bad page) ...
        let checked = box.cacheInProcess(["check"])
        #expect(checked.status == 74 && checked.stderr.contains("Page \(root)"), "\(checked.stdout) \(checked.stderr)")
        // ... and reindex makes the index again beside the pages it cannot drop, and says so.
        let reindexed = box.cacheInProcess(["reindex"])
        #expect(reindexed.status == 0 && reindexed.stderr.contains("made again beside them"), "\(reindexed.stderr)")
        #expect(try found(box, "notes", "version") .count == 20)
        #expect(box.cacheInProcess(["check"]).stdout.contains("search index: ok"))
        // Damaged again: a change to the source is not refused for the index's sake either.
        _ = try damage()
        let set = box.cacheInProcess(["sources", "set", "notes", "--search", "off"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(box.cacheInProcess(["sources", "set", "notes", "--search", "on"]).status == 0)
        _ = try damage()
        let removed = box.cacheInProcess(["sources", "remove", "notes", "--yes"])
        #expect(removed.status == 0, "\(removed.stderr)")
    }
}
