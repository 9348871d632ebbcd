import Foundation
import Testing

/// `cache sources set`: a source changed in place keeps its rows, history and run numbers.
@Suite(.gated) struct SourcesSetTests {
    func bank(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
        #expect(try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)
        #expect(try box.cache("sync", "bank").status == 0)
    }

    func staleFlags(_ box: Sandbox) throws -> [Bool] {
        try box.cache("list", "bank", "--offline", "--json").jsonArray().map { $0["stale"] as? Bool ?? false }
    }

    @Test func settingsChangeAndRowsHistoryAndRunNumbersStay() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        let rowsBefore = try cacheDumpOfRows(box)

        let set = try await box.cache("sources", "set", "bank", "--ttl", "2h", "--header", "X-Api-Version: 2", "--token-env", "BANK_TOKEN",
                                "--max-delete", "10", "--mode", "merge")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stderr == "Changed source 'bank': ttl 15m → 2h, mode replace → merge, headers none → X-Api-Version, token none → $BANK_TOKEN, max-delete 50% → 10.\n")
        let source = try #require(try await box.cache("sources", "list", "--json").jsonArray().first)
        #expect(source["ttl_s"] as? Int == 7200 && source["mode"] as? String == "merge" && source["max_delete"] as? String == "10")
        #expect(source["headers"] as? [String] == ["X-Api-Version"] && source["token_env"] as? String == "BANK_TOKEN")
        #expect(try cacheDumpOfRows(box) == rowsBefore)
        #expect(try staleFlags(box).allSatisfy { !$0 })

        // The next sync sends the new header and token, and its run number follows the first.
        #expect(try await box.cache(["sync", "bank"], environment: ["BANK_TOKEN": "t0ken"]).status == 0)
        let sent = try #require(try upstreamRequests(upstream).last)
        #expect((sent["headers"] as? [String: String])?["x-api-version"] == "2")
        #expect(sent["authorization"] as? String == "Bearer t0ken")
        #expect(try await box.cache("history", "bank", "--json").jsonArray().map { $0["run"] as? Int } == [2, 1])

        // --no-headers and --no-token clear them; the same value again changes nothing.
        let cleared = try await box.cache("sources", "set", "bank", "--no-headers", "--no-token")
        #expect(cleared.stderr == "Changed source 'bank': headers X-Api-Version → none, token $BANK_TOKEN → none.\n")
        let same = try await box.cache("sources", "set", "bank", "--ttl", "2h")
        #expect(same.status == 0 && same.stderr == "Source 'bank' already had these settings; nothing changed.\n")
    }

    @Test func aNewURLKeepsRowsButMarksThemStaleAndDropsValidators() async throws {
        let first = try LoopbackUpstream(), second = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(first, box)
        #expect(try rows(box.database, "SELECT etag FROM sync_state").first?["etag"] != "")
        let rowsBefore = try cacheDumpOfRows(box)

        let set = try await box.cache("sources", "set", "bank", "--url", second.baseURL + "/account")
        #expect(set.status == 0)
        #expect(set.stderr.contains("Its cached rows are kept but count as stale until 'cache sync bank' confirms them."))
        #expect(try staleFlags(box).count == 6)
        #expect(try staleFlags(box).allSatisfy { $0 })
        #expect(try rows(box.database, "SELECT coalesce(etag, '') || coalesce(last_modified, '') || coalesce(body_hash, '') AS v FROM sync_state").first?["v"] == "")

        // The new upstream gets a plain request (no validator of the old one) and confirms the rows.
        #expect(try await box.cache("sync", "bank").status == 0)
        let request = try #require(try upstreamRequests(second).first)
        #expect(request["if_none_match"] is NSNull && request["if_modified_since"] is NSNull)
        #expect(try staleFlags(box).allSatisfy { !$0 })
        #expect(try cacheDumpOfRows(box) == rowsBefore)
    }

    /// A sync begun before its source's URL changed writes nothing: its data came from the old one.
    @Test func aSyncInFlightWhenTheURLChangesWritesNothing() async throws {
        let first = try LoopbackUpstream(), second = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", first.baseURL + "/account").status == 0)
        try first.control(["delay": 2])
        let sync = try box.start(["sync", "bank"])
        let deadline = ContinuousClock.now + .seconds(10)
        while try upstreamRequests(first).isEmpty && ContinuousClock.now < deadline { try await pause(0.05) }
        #expect(try await box.cache("sources", "set", "bank", "--url", second.baseURL + "/account").status == 0)
        let (result, _) = await sync.finished()
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("was removed or changed during the sync; nothing was written"))
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "0")
    }

    @Test(arguments: [
        (["sources", "set", "nosuch", "--ttl", "1h"], Int32(66), "cache: no source named 'nosuch'"),
        (["sources", "set", "bank"], Int32(64), "cache: nothing to change: give at least one option, such as --ttl or --url."),
        (["sources", "set", "bank", "--kind", "jokes"], Int32(64), "cache: a source's kind cannot change"),
        (["sources", "set", "bank", "--header", "X: 1", "--no-headers"], Int32(64), "cache: '--header' and '--no-headers' cannot be used together."),
        (["sources", "set", "bank", "--url", "http://user:pw@h/"], Int32(64), "cache: invalid --url: credentials in the URL are not stored"),
        (["sources", "set", "bank", "--url", "ftp://h/x"], Int32(78), "cache:"),
    ] as [([String], Int32, String)])
    func badChangesAreRefusedAndChangeNothing(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let box = try Sandbox()
        #expect(try box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/account").status == 0)
        let before = try box.cache("sources", "list", "--json").stdout
        let result = try box.cache(arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        #expect(try box.cache("sources", "list", "--json").stdout == before)
    }

    private func cacheDumpOfRows(_ box: Sandbox) throws -> [[String: String]] {
        try rows(box.database, "SELECT id, vendor, amount, date FROM transactions ORDER BY id")
    }
}
