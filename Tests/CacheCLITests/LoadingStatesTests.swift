import Foundation
import OfflineCache
import Testing

/// The library's "preview, then content" sequence, against the loopback upstream over real HTTP.
@Suite(.gated) struct LoadingStatesTests {
    func collect(_ box: Sandbox, _ name: String) async throws -> [Cache.LoadingState] {
        var states: [Cache.LoadingState] = []
        for await state in try Cache(path: box.database).states(of: name) { states.append(state) }
        return states
    }

    /// The rows of a state, each decoded from its JSON as an app would.
    func transactions(_ rows: [Cached<String>]) throws -> [Source.Kind.AccountTransaction] {
        try rows.map { try JSONDecoder().decode(Source.Kind.AccountTransaction.self, from: Data($0.value.utf8)) }
    }


    /// Upstream's account gains a newest transaction, Gift (and loses `removing`'s).
    func giveAGift(_ upstream: LoopbackUpstream, removing vendor: String? = nil) throws {
        var account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var transactions = try #require(account["transactions"] as? [[String: Any]])
        transactions.append(["type": 0, "vendor": "Gift", "amount": 50, "date": "2026-11-30 09:00:00"])
        if let vendor { transactions.removeAll { $0["vendor"] as? String == vendor } }
        account["transactions"] = transactions
        try upstream.setAccount(account)
    }

    @Test func previewThenFresh() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try giveAGift(upstream)

        let states = try await collect(box, "bank")
        #expect(states.count == 3)
        guard states.count == 3,
              case .preview(let preview, stale: true) = states[0],
              case .refreshing = states[1],
              case .fresh(let fresh, let changes) = states[2] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(preview.count == 6 && preview.allSatisfy(\.isStale))
        #expect(fresh.count == 7 && fresh.allSatisfy { !$0.isStale })
        #expect(try Cache(path: box.database).account(of: "bank")?.value.name == "Jane Appleseed")
        let gift = try #require(try transactions(fresh).first { $0.vendor == "Gift" })
        #expect(changes.inserted == [gift.id] && changes.updated.isEmpty && changes.removed.count == 0)
    }

    /// With a limit, a row the new one pushes out of the window is still cached: not removed.
    @Test func aRowThatOnlyLeftTheWindowIsNotRemoved() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        // The newest first: Gift goes on top of the three-row window, pushing the third out;
        // Payroll, outside the window, is really gone.
        try giveAGift(upstream, removing: "Payroll")

        var states: [Cache.LoadingState] = []
        for await state in try Cache(path: box.database).states(of: "bank", limit: 3) { states.append(state) }
        guard case .preview(let preview, stale: true)? = states.first,
              case .fresh(let fresh, let changes)? = states.last else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(try transactions(preview).map(\.vendor) == ["Refund: Amazon", "Uber", "Whole Foods"])
        #expect(try transactions(fresh).map(\.vendor) == ["Gift", "Refund: Amazon", "Uber"])
        #expect(changes.inserted == [try #require(fresh.first?.key)])
        #expect(changes.removed.count == 0, "\(changes.removed)")
    }

    @Test func previewThenFailedKeepsTheCachedRows() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["fault": "envelope-error", "message": "Ledger offline"])

        let states = try await collect(box, "bank")
        guard states.count == 3, case .preview(_, stale: true) = states[0], case .refreshing = states[1],
              case .failed(let error, let cached) = states[2] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(error.description == "upstream answered status 500: Ledger offline")
        guard case .refreshFailed(_, upstream: .envelope(status: 500, message: "Ledger offline")?) = error else {
            Issue.record("expected the typed envelope failure, got \(error)")
            return
        }
        #expect(cached.count == 6 && cached.allSatisfy(\.isStale))
    }

    @Test func emptyThenFresh() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        let states = try await collect(box, "jokes")
        guard states.count == 3, case .preview(let empty, stale: true) = states[0], case .refreshing = states[1],
              case .fresh(let jokes, let changes) = states[2] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(empty.isEmpty)
        #expect(jokes.count == 10)
        #expect(changes.inserted.count == 10)
    }

    @Test func aFreshSourceYieldsItsPreviewAlone() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        try await box.cache("sync")
        let states = try await collect(box, "jokes")
        guard states.count == 1, case .preview(let rows, stale: false) = states[0] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(rows.count == 10)
        #expect((try upstream.stats()["total"] as? Int) == 1)
    }

    // The plan is the one `cache list` follows (one implementation, `RefreshBehindRead`):
    // the cases below are the ones PreviewTests and HardeningTests hold for the command.

    @Test func aSourceBackingOffYieldsItsPreviewAndWhyWithNoRequest() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["status": 503])
        #expect(try await box.cache("sync", "bank").status == 75)  // a backoff begins
        let requests = try upstreamRequests(upstream).count

        let states = try await collect(box, "bank")
        guard states.count == 2, case .preview(_, stale: true) = states[0],
              case .failed(let error, cached: let cached) = states[1] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(error.description.hasPrefix("not refreshing: backing off after failures; next try in "), "\(error)")
        #expect(error.description.contains("(last error: HTTP 503 from "), "\(error)")
        #expect(cached.count == 6)
        #expect(try upstreamRequests(upstream).count == requests)
    }

    @Test func aSourceWithoutItsTokenIsNotRefreshedAndRecordsNothing() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account",
                            "--token-env", "BANK_TOKEN", "--ttl", "10m")
        #expect(try await box.cache(["sync"], environment: ["BANK_TOKEN": "secret"]).status == 0)
        try age(box.database, by: 3600)

        var states: [Cache.LoadingState] = []
        for await state in try Cache(path: box.database, environment: [:]).states(of: "bank") { states.append(state) }
        guard states.count == 2, case .failed(let error, cached: let cached) = states[1] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(error.description == "not refreshing: the token variable BANK_TOKEN is not set in this environment")
        #expect(cached.count == 6)
        #expect(try upstreamRequests(upstream).count == 1)
        #expect(try rows(box.database, "SELECT outcome FROM sync_runs").map { $0["outcome"] } == ["updated"])
    }

    /// A failure that is not a refresh's keeps its own case: an app's `switch` sees it.
    @Test func anUnknownSourceFailsWithItsOwnCase() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        let states = try await collect(box, "nope")
        guard states.count == 1, case .failed(.noSuchSource("nope"), let cached) = states[0] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(cached.isEmpty)
    }

    /// A refresh another process is running is the one the app waits for: no second request.
    @Test func aRefreshInFlightElsewhereIsJoined() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["delay": 2])
        let cron = try box.start(["sync", "bank"])
        let deadline = Date().addingTimeInterval(20)
        while try rows(box.database, "SELECT count(*) AS n FROM sync_leases").first?["n"] == "0", Date() < deadline {
            try await pause(0.05)
        }

        let states = try await collect(box, "bank")
        guard states.count == 3, case .preview(_, stale: true) = states[0], case .refreshing = states[1],
              case .fresh(let fresh, _) = states[2] else {
            Issue.record("unexpected states: \(states)")
            return
        }
        #expect(fresh.count == 6)
        #expect(await cron.finished().0.status == 0)
        #expect(try upstreamRequests(upstream).count == 2)  // the first sync and the one joined
        let runs = try rows(box.database, "SELECT outcome FROM sync_runs ORDER BY id").map { $0["outcome"] }
        #expect(runs == ["updated", "unchanged"], "\(runs)")  // the app saw the lease and started nothing
    }
}
