import Foundation
import Testing

/// Rows turn stale once upstream has not confirmed them within the TTL; `list --stale`,
/// `status` and a plain `sqlite3` query of the views all agree; a failed sync changes none of it.
/// (Reads here are `--offline`: a stale read would otherwise start a refresh that confirms the rows.)
@Suite(.gated) struct StalenessTests {
    func sqlite3(_ box: Sandbox, _ sql: String) throws -> String {
        try box.run("/usr/bin/env", ["sqlite3", box.database, sql]).stdout
    }

    @Test func replaceSourceRowsTurnStaleAfterTheTTL() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "1h")
        try await box.cache("sync")
        let fresh = try await box.cache("list", "bank", "--offline", "--json").jsonArray()
        #expect(fresh.count == 6 && fresh.allSatisfy { $0["stale"] as? Bool == false })
        #expect(try await box.cache("list", "bank", "--offline", "--stale", "--json").jsonArray().isEmpty)

        // Two hours on, as far as the cache can tell (a short TTL and a sleep would race a loaded machine).
        try age(box.database, by: 7200)
        let stale = try await box.cache("list", "bank", "--offline", "--json").jsonArray()
        #expect(stale.count == 6 && stale.allSatisfy { $0["stale"] as? Bool == true })
        #expect(try await box.cache("list", "bank", "--offline", "--stale", "--json").jsonArray().count == 6)
        let status = try #require(try await box.cache("status", "--json").jsonArray().first)
        #expect(status["stale_rows"] as? Int == 6)
        #expect(status["stale"] as? Bool == true)
        #expect(try sqlite3(box, "SELECT count(*) FROM cached_transactions WHERE stale = 1 AND age_s >= 7200") == "6\n")
        #expect(try sqlite3(box, "SELECT stale FROM cached_accounts") == "1\n")
        // The age shown is the age stored: two hours.
        let human = try await box.cache("list", "bank", "--offline")
        let ages = human.stdout.components(separatedBy: "stale, ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(ages.count == 7 && ages.allSatisfy { $0 == 2 } && human.stdout.contains("stale, 2h old"), "\(human.stdout)")

        // A failed sync confirms nothing: the rows stay stale, unchanged.
        let before = try cacheDump(box.database)
        try upstream.control(["status": "503"])
        #expect(try await box.cache("sync", "bank").status == 75)
        #expect(try cacheDump(box.database) == before)
        #expect(try await box.cache("list", "bank", "--offline", "--stale", "--json").jsonArray().count == 6)

        // A successful sync confirms every row again.
        try upstream.control(["reset": true])
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try await box.cache("list", "bank", "--offline", "--stale", "--json").jsonArray().isEmpty)
    }

    @Test func mergeSourceRowsAreStaleUnlessTheLastSamplesReturnedThem() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        // The first sample two hours old under a one-hour TTL, the second just taken.
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/random/20", "--ttl", "1h")
        try await box.cache("sync")
        try age(box.database, by: 7200)
        try await box.cache("sync")
        let served = try #require(try upstream.stats()["served_jokes"] as? [[Int]])
        let recent = Set(served[1])
        let all = Set(served.joined())

        let staleListed = try await box.cache("list", "jokes", "--offline", "--stale", "--json").jsonArray()
        let status = try #require(try await box.cache("status", "--json").jsonArray().first)
        let viewStale = try sqlite3(box, "SELECT id FROM cached_jokes WHERE stale = 1 ORDER BY id")

        let expectedStale = all.subtracting(recent)
        #expect(!expectedStale.isEmpty)
        #expect(Set(staleListed.map { $0["id"] as! Int }) == expectedStale)
        #expect(staleListed.allSatisfy { $0["stale"] as? Bool == true })
        #expect(status["stale_rows"] as? Int == expectedStale.count)
        #expect(status["rows"] as? Int == all.count)
        #expect(viewStale == expectedStale.sorted().map { "\($0)\n" }.joined())
    }
}
