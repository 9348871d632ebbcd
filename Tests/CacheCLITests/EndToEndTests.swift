import Foundation
import Testing

/// The built `cache` binary against the loopback upstream over real HTTP, on a real SQLite file.
@Suite(.gated) struct EndToEndTests {
    /// The upstream's default account body, as `Scripts/upstream.py` serves it.
    static func upstreamAccount(_ upstream: LoopbackUpstream) throws -> [String: Any] {
        let envelope = try upstream.get("/account") as? [String: Any]
        return try #require(envelope?["body"] as? [String: Any])
    }

    /// Checks the cached transactions equal an upstream account body, field by field.
    static func expectCacheEquals(_ account: [String: Any], _ listed: [[String: Any]],
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let upstream = try #require(account["transactions"] as? [[String: Any]])
        #expect(listed.count == upstream.count, sourceLocation: sourceLocation)
        // `list` orders newest first; compare as multisets of (date, vendor, type, amount).
        func key(date: String, vendor: String, type: Int, amount: Double) -> String { "\(date)|\(vendor)|\(type)|\(amount)" }
        let expected = upstream.map { t in
            key(date: (t["date"] as! String).replacingOccurrences(of: " ", with: "T") + "Z",
                vendor: t["vendor"] as! String, type: t["type"] as! Int, amount: (t["amount"] as! NSNumber).doubleValue)
        }.sorted()
        let actual = listed.map { t in
            key(date: t["date"] as! String, vendor: t["vendor"] as! String, type: t["type"] as! Int,
                amount: (t["amount"] as! NSNumber).doubleValue)
        }.sorted()
        #expect(actual == expected, sourceLocation: sourceLocation)
        for row in listed {
            #expect(row["account"] as? String == account["name"] as? String, sourceLocation: sourceLocation)
            #expect(row["source"] as? String == "bank", sourceLocation: sourceLocation)
            #expect(row["stale"] as? Bool == false, sourceLocation: sourceLocation)
        }
    }

    @Test func syncedAccountEqualsUpstreamAndAChangedAccountReconcilesExactly() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)

        let first = try await box.cache("sync", "bank", "--json")
        #expect(first.status == 0, "\(first.stderr)")
        let firstReport = try #require(try first.jsonArray().first)
        #expect(firstReport["outcome"] as? String == "updated")
        #expect(firstReport["inserted"] as? Int == 6)
        #expect(firstReport["http_status"] as? Int == 200)

        let account = try Self.upstreamAccount(upstream)
        let listing = try await box.cache("list", "bank", "--json")
        let listed = try listing.jsonArray()
        try Self.expectCacheEquals(account, listed)
        // One object per line, keys in the README's order, written as JSONValue writes them.
        let lines = listing.stdout.split(separator: "\n")
        #expect(lines.count == listed.count)
        #expect(lines[0].hasPrefix("[{\"id\": \"") && lines[1].hasPrefix(" {\"id\": \""))
        #expect(lines[0].contains(", \"source\": \"bank\", \"account\": \"\(account["name"] as! String)\", \"type\": "))
        #expect(lines[0].hasSuffix(", \"stale\": false},") && lines.last!.hasSuffix("false}]"))
        // The two identical Starbucks transactions stay two rows with two ids.
        #expect(listed.filter { $0["vendor"] as? String == "Starbucks" }.count == 2)
        #expect(Set(listed.map { $0["id"] as! String }).count == listed.count)

        // Upstream changes: one transaction removed (Uber), one added (Lyft), one amount
        // changed (Whole Foods), and the balance changed.
        var changed = try changedAccount(account)
        changed["currentBalance"] = 1111.11
        try upstream.setAccount(changed)

        let second = try await box.cache("sync", "bank", "--json")
        #expect(second.status == 0, "\(second.stderr)")
        let report = try #require(try second.jsonArray().first)
        #expect(report["outcome"] as? String == "updated")
        #expect(report["inserted"] as? Int == 1)
        #expect(report["updated"] as? Int == 1)
        #expect(report["deleted"] as? Int == 1)

        let relisted = try await box.cache("list", "bank", "--json").jsonArray()
        try Self.expectCacheEquals(changed, relisted)
        // Every row that stayed kept its id; the changed amount is the same row.
        let oldIDs = Set(listed.map { $0["id"] as! String })
        let newIDs = Set(relisted.map { $0["id"] as! String })
        #expect(oldIDs.subtracting(newIDs).count == 1)
        #expect(newIDs.subtracting(oldIDs).count == 1)
        let oldWholeFoods = listed.first { $0["vendor"] as? String == "Whole Foods" }?["id"] as? String
        let newWholeFoods = relisted.first { $0["vendor"] as? String == "Whole Foods" }?["id"] as? String
        #expect(oldWholeFoods != nil && oldWholeFoods == newWholeFoods)
        let balance = try rows(box.database, "SELECT balance FROM cached_accounts WHERE source = 'bank'")
        #expect(balance.first?["balance"] == "1111.11")

        // A further identical sync is `unchanged` and rewrites no row.
        let dumpBefore = try cacheDump(box.database)
        let writesBefore = try rows(box.database, "SELECT group_concat(seen_at) AS s FROM transactions")
        let third = try await box.cache("sync", "bank", "--json")
        let thirdReport = try #require(try third.jsonArray().first)
        #expect(thirdReport["outcome"] as? String == "unchanged")
        #expect(thirdReport["inserted"] as? Int == 0 && thirdReport["updated"] as? Int == 0 && thirdReport["deleted"] as? Int == 0)
        #expect(try rows(box.database, "SELECT group_concat(seen_at) AS s FROM transactions") == writesBefore)
        // Only the source's confirmation time moved.
        let strip = { (dump: String) in dump.split(separator: "\n").filter { !$0.hasPrefix("'bank'|'20") }.joined(separator: "\n") }
        #expect(strip(try cacheDump(box.database)) == strip(dumpBefore))
    }

    @Test func jokesInMergeModeAccumulateTheUnionOfSamples() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/random/7")
        for _ in 0..<5 {
            let result = try await box.cache("sync", "jokes")
            #expect(result.status == 0, "\(result.stderr)")
        }
        let served = try #require(try upstream.stats()["served_jokes"] as? [[Int]])
        #expect(served.count == 5)
        let union = Set(served.joined())

        let listed = try await box.cache("list", "jokes", "--json").jsonArray()
        #expect(Set(listed.map { $0["id"] as! Int }) == union)
        #expect(listed.map { $0["id"] as! Int } == listed.map { $0["id"] as! Int }.sorted())

        // Each cached joke is the real one from the Official Joke API's data, numbered in file order.
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Paths.jokesFile))) as? [[String: Any]])
        for joke in listed {
            let original = file[(joke["id"] as! Int) - 1]
            #expect(joke["setup"] as? String == original["setup"] as? String)
            #expect(joke["punchline"] as? String == original["punchline"] as? String)
            #expect(joke["type"] as? String == original["type"] as? String)
            #expect(joke["source"] as? String == "jokes")
        }
    }

    @Test func aSingleJokeObjectIsAccepted() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "one", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/42")
        #expect(try await box.cache("sync").status == 0)
        let listed = try await box.cache("list", "one", "--json").jsonArray()
        #expect(listed.map { $0["id"] as! Int } == [42])
    }

    @Test func fileURLsAreReadDirectly() async throws {
        let box = try Sandbox()
        // A bundled data file, as an app would ship it; unknown fields are ignored.
        let file = box.folder + "/data.json"
        try Data(#"[{"id": 1, "type": "general", "setup": "S1", "punchline": "P1", "extra": true}, {"id": 2, "type": "dad", "setup": "S2", "punchline": "P2"}]"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        try await box.cache("sources", "add", "local", "--kind", "jokes", "--url", "file://" + file)
        let result = try await box.cache("sync", "local", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try await box.cache("list", "local", "--json").jsonArray()
        #expect(listed.map { $0["setup"] as! String } == ["S1", "S2"])
    }

    @Test func humanListShowsTheAccountLikeTheApp() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try await box.cache("sync")
        let listing = try await box.cache("list", "bank")
        #expect(listing.status == 0)
        let lines = listing.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Jane Appleseed  balance 1,234.56")
        // Newest first; dates as `Mon, Nov 30`; credits `+`, debits `-`.
        #expect(lines[1].contains("Refund: Amazon") && lines[1].contains("Mon, Nov 30") && lines[1].hasSuffix("+ 19.99"))
        #expect(lines.contains { $0.contains("Payroll") && $0.contains("Fri, Nov 27") && $0.hasSuffix("+ 2,000.00") })
        #expect(lines.contains { $0.contains("Uber") && $0.contains("Sun, Nov 29") && $0.hasSuffix("- 23.50") })
        #expect(!listing.stdout.contains("stale"))

        let csv = try await box.cache("list", "bank", "--csv", "--limit", "2")
        let csvLines = csv.stdout.split(separator: "\n")
        #expect(csvLines.count == 3)
        #expect(csvLines.first == "id,source,account,type,vendor,amount,date,seen_at,age_s,stale")
    }

    @Test func statusReportsEachSource() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account?key=secret")
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "2h")
        try await box.cache("sync", "jokes")
        let status = try await box.cache("status", "--json").jsonArray()
        #expect(status.map { $0["source"] as! String } == ["bank", "jokes"])
        #expect(status[0]["rows"] as? Int == 0)
        #expect(status[0]["stale"] as? Bool == true)
        #expect(status[0]["last_success_at"] is NSNull)
        #expect(status[0]["url"] as? String == upstream.baseURL + "/account?key=REDACTED")  // no secret
        #expect(status[1]["rows"] as? Int == 10)
        #expect(status[1]["ttl_s"] as? Int == 7200)
        #expect(status[1]["stale"] as? Bool == false)
        #expect(status[1]["mode"] as? String == "merge")

        let human = try await box.cache("status")
        #expect(human.stdout.contains("jokes") && human.stdout.contains("never"))
        #expect(!human.stdout.contains("secret"))
    }

    @Test func removingASourceRemovesItsRows() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        try await box.cache("sync")
        #expect(try await box.cache("sources", "remove", "jokes", "--yes").status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM jokes").first?["n"] == "0")
        #expect(try await box.cache("list", "jokes").status == 66)
        #expect(try await box.cache("sources", "list", "--json").jsonArray().isEmpty)
    }

    @Test func longSyncsShowProgressOnATerminalOnly() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.generate(count: 30_000, seed: 5)
        // Each seed is a different account: every sync replaces it all, past the removal guard.
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--max-delete", "100%")
        let screen = try await box.terminal(["sync", "bank"])
        #expect(screen.status == 0)
        // Redrawn at most every 100 ms, so which counts appear depends on the machine's speed.
        #expect(screen.stdout.contains("reconciling 0 of 30,000 rows"), "\(screen.stdout.suffix(300))")
        #expect(screen.stdout.contains("bank: updated (30000 inserted"))

        try upstream.generate(count: 30_000, seed: 6)
        let piped = try await box.cache("sync", "bank")
        #expect(piped.status == 0 && !piped.stderr.contains("reconciling"))
        try upstream.generate(count: 30_000, seed: 7)
        let quiet = try await box.terminal(["sync", "bank", "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet.stdout)")
    }
}
