import Foundation
import Testing

/// The removal guard and `sync --plan`, through the built binary: a glitch upstream must not
/// wipe the offline copy.
@Suite(.gated) struct RemovalGuardTests {
    func transactions(_ count: Int) -> [[String: Any]] {
        (0..<count).map { ["type": 1, "vendor": "Shop \($0)", "amount": $0 + 1, "date": String(format: "2026-11-%02d 10:00:%02d", 1 + $0 % 28, $0 % 60)] }
    }

    func bankWith(_ count: Int, _ extra: [String] = []) throws -> (LoopbackUpstream, Sandbox) {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try box.cache(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"] + extra)
        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": transactions(count)])
        let first = try box.cache("sync", "bank")
        #expect(first.status == 0, "\(first.stderr)")
        return (upstream, box)
    }

    @Test func anEmptyListFromUpstreamIsHeldAndTheCacheKept() async throws {
        let (upstream, box) = try bankWith(130)
        let before = try cacheDump(box.database)
        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": transactions(10)])
        let held = try await box.cache("sync", "bank")
        #expect(held.status == 65, "\(held.stderr)")
        #expect(held.stderr.contains("cache: sync bank: held: would remove 120 of 130 cached transactions (more than the 50% this source allows); nothing was written"), "\(held.stderr)")
        #expect(try cacheDump(box.database) == before)
        let run = try #require(try rows(box.database, "SELECT outcome, error FROM sync_runs ORDER BY id DESC LIMIT 1").first)
        #expect(run["outcome"] == "held" && run["error"]?.contains("would remove 120 of 130") == true)
        #expect(try await box.cache("list", "bank", "--offline", "--json").jsonArray().count == 130)
        // Held is not fresh: the freshness check fails, naming the hold, however young the rows.
        let checked = box.cacheInProcess(["status", "--max-age", "1d"])
        #expect(checked.status == 1 && checked.stdout.hasPrefix("bank: held by the removal guard (its last success "), "\(checked.stdout)")
        #expect(checked.stdout.contains("would remove 120 of 130"), "\(checked.stdout)")
        #expect(try box.cacheInProcess(["status", "--max-age", "1d", "--json"]).jsonArray().first?["held"] as? Bool == true)
        // A timer's sync, skipped while the hold waits a TTL, keeps the hold's exit status.
        let cron = try await box.cache("sync", "--if-stale", "--quiet")
        #expect(cron.status == 65 && cron.stdout.isEmpty, "\(cron.status) \(cron.stderr)")

        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": []])
        let emptied = try await box.cache("sync", "bank")
        #expect(emptied.status == 65)
        #expect(emptied.stderr.contains("would remove all 130 cached transactions"), "\(emptied.stderr)")
        #expect(try cacheDump(box.database) == before)

        // Accepted once: applied; the guard is back for the next sync.
        let accepted = try await box.cache("sync", "bank", "--accept-removals")
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "0")
        #expect(box.cacheInProcess(["status", "--max-age", "1d"]).status == 0)
    }

    /// A hold after a failure is still a hold: a timer's skipped sync says so and exits 65,
    /// not "backing off after 1 failure" and 75 (a hold does not reset the failures before it).
    @Test func aHoldAfterAFailureIsSaidAsAHold() async throws {
        let (upstream, box) = try bankWith(130)
        try upstream.control(["status": 500])
        #expect(try await box.cache("sync", "bank").status == 75)
        try upstream.control(["reset": true])
        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": transactions(10)])
        #expect(try await box.cache("sync", "bank").status == 65)
        let cron = try await box.cache("sync", "--if-stale", "--json")
        let skipped = try #require(try cron.jsonArray().first)
        #expect(cron.status == 65 && (skipped["note"] as? String)?.hasPrefix("held by the removal guard") == true, "\(cron.status) \(skipped)")
    }

    @Test func aSourceMayAllowMore() async throws {
        let (upstream, box) = try bankWith(10, ["--max-delete", "100%"])
        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": []])
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "0")

        let (strict, strictBox) = try bankWith(10, ["--max-delete", "2"])
        try strict.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": transactions(7)])
        let held = try await strictBox.cache("sync", "bank")
        #expect(held.status == 65)
        #expect(held.stderr.contains("would remove 3 of 10 cached transactions (more than the 2 this source allows)"), "\(held.stderr)")
        #expect(try await strictBox.cache("sources", "list", "--json").jsonArray().first?["max_delete"] as? String == "2")
    }

    @Test func aPlanShowsTheChangesAndTheVerdictAndWritesNothing() async throws {
        let (upstream, box) = try bankWith(4)
        let before = try cacheDump(box.database)
        let runsBefore = try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"]
        var changed = transactions(4)
        changed[0]["amount"] = 99
        changed.removeLast(3)
        try upstream.setAccount(["name": "Guarded", "currentBalance": 5, "transactions": changed + [["type": 0, "vendor": "New", "amount": 1, "date": "2026-11-20 10:00:00"]]])

        let human = try await box.cache("sync", "bank", "--plan")
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.hasPrefix("bank: plan: 1 to insert, 1 to update, 3 to remove (nothing written)\n"), "\(human.stdout)")
        #expect(human.stdout.contains("  ~ Shop 0  ") && human.stdout.contains("amount 1.00 → 99.00"), "\(human.stdout)")
        #expect(human.stdout.contains("  + New  "), "\(human.stdout)")
        #expect(human.stdout.contains("the removal guard would hold this sync: would remove 3 of 4 cached transactions"), "\(human.stdout)")

        let json = try #require(try await box.cache("sync", "bank", "--plan", "--json").jsonArray().first)
        #expect(json["outcome"] as? String == "planned")
        #expect((json["would_hold"] as? String)?.hasPrefix("would remove 3 of 4") == true)
        let plan = try #require(json["plan"] as? [[String: Any]])
        #expect(plan.compactMap { $0["change"] as? String }.sorted() == ["inserted", "removed", "removed", "removed", "updated"])

        #expect(try cacheDump(box.database) == before)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == runsBefore)
    }

    @Test func aPlanTakesTheLeaseLikeASync() async throws {
        let (upstream, box) = try bankWith(4)
        try upstream.control(["delay": 2])
        let sync = try box.start(["sync", "bank"])
        let deadline = ContinuousClock.now + .seconds(10)
        while try upstreamRequests(upstream).count < 2 && ContinuousClock.now < deadline { try await pause(0.05) }
        let plan = try #require(try await box.cache("sync", "bank", "--plan", "--json").jsonArray().first)
        #expect(plan["outcome"] as? String == "skipped")
        #expect((plan["note"] as? String)?.hasPrefix("already syncing") == true)
        #expect(await sync.finished().0.status == 0)
    }
}
