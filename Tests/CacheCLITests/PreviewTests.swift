import Foundation
import Testing

/// `cache list` answers from the cache at once and refreshes behind the read.
@Suite(.gated) struct PreviewTests {
    /// Polls until `condition` holds, for at most `seconds`.
    func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try await pause(0.1)
        }
        return try await condition()
    }



    @Test func fiveStaleReadersAnswerAtOnceAndOneRefreshLands() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["delay": 6])

        let readers = try (0..<5).map { _ in UncheckedSendable(try box.start(["list", "bank", "--json"])) }
        // Waited for all at once, so each reader's time is its own, not the ones before it.
        let finished = await withTaskGroup(of: (RunResult, Duration).self) { group in
            for reader in readers { group.addTask { await reader.value.finished() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (result, elapsed) in finished {
            #expect(result.status == 0)
            // The refresh behind them takes over 6 s (the upstream's delay): none waited for it.
            // A reader takes milliseconds alone; the bound leaves room for a busy suite.
            #expect(elapsed < .seconds(5), "a reader took \(elapsed)")
            let rows = try result.jsonArray()
            #expect(rows.count == 6 && rows.allSatisfy { $0["stale"] as? Bool == true })
        }

        // The refresh outlives the readers and lands; a later read shows the rows fresh.
        #expect(try await eventually(30) {
            try await box.cache("list", "bank", "--offline", "--json").jsonArray().allSatisfy { $0["stale"] as? Bool == false }
        })
        #expect(try upstreamRequests(upstream).count == 2)  // the first sync, and exactly one refresh
        let runs = try rows(box.database, "SELECT outcome FROM sync_runs WHERE outcome != 'skipped' ORDER BY id")
        #expect(runs.map { $0["outcome"] } == ["updated", "unchanged"])
    }

    @Test func withTheUpstreamDownListStillServesAndWaitNamesTheFailure() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        upstream.stop()

        let waited = try await box.cache("list", "bank", "--wait", "--json")
        #expect(waited.status == 0)
        #expect(waited.stderr.contains("cache: list bank: refresh failed: cannot reach"), "\(waited.stderr)")
        #expect(waited.stderr.contains("connection refused"))
        #expect(try waited.jsonArray().allSatisfy { $0["stale"] as? Bool == true })
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs WHERE outcome = 'failed'").first?["n"] == "1")

        // The cache is still served at once; the failing upstream is left alone while it backs off.
        let quick = try await box.cache("list", "bank", "--json")
        #expect(quick.status == 0)
        #expect(try quick.jsonArray().count == 6)
        let again = try await box.cache("list", "bank", "--wait", "--json")
        #expect(again.status == 0)
        #expect(again.stderr.contains("not refreshing: backing off after failures; next try in "), "\(again.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs WHERE outcome = 'failed'").first?["n"] == "1")
    }

    @Test func offlineReadsStartNoRefresh() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        #expect(try await box.cache("list", "bank", "--offline", "--json").status == 0)
        // A refresh, had one been started, is either still running (a process naming this
        // database) or done (a second request upstream, a second run): neither, at any moment.
        #expect(processesMentioning(box.database).isEmpty)
        #expect(try upstreamRequests(upstream).count == 1)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "1")

        // The same read without --offline does start one: the check above can see it.
        #expect(try await box.cache("list", "bank", "--json").status == 0)
        let deadline = ContinuousClock.now + .seconds(30)
        while try upstreamRequests(upstream).count < 2 && ContinuousClock.now < deadline {
            try await pause(0.05)
        }
        #expect(try upstreamRequests(upstream).count == 2)
    }

    @Test func anEmptyCacheWithoutATerminalSaysSoAndPrintsNothing() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        // The upstream holds its answer until the read is over: the refresh cannot land first.
        try upstream.control(["hold": true])
        let result = try await box.cache("list", "jokes", "--json")
        #expect(result.status == 75)  // nothing yet, and a refresh running: ask again
        #expect(result.stdout == "[]\n")
        #expect(result.stderr == "Nothing cached for 'jokes' yet; a refresh has started.\n")
        try upstream.control(["release": true])
        #expect(try await eventually(10) { try await box.cache("list", "jokes", "--offline", "--json").jsonArray().count == 10 })
    }

    @Test func aTerminalSeesThePreviewThenARedrawWithMarks() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        var account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        var transactions = try #require(account["transactions"] as? [[String: Any]])
        transactions.removeAll { $0["vendor"] as? String == "Uber" }
        transactions[0]["amount"] = 2500
        transactions.append(["type": 1, "vendor": "Lyft", "amount": 12, "date": "2026-11-30 01:00:00"])
        account["transactions"] = transactions
        try upstream.setAccount(account)
        try upstream.control(["delay": 1])

        let screen = try await box.terminal(["list", "bank"])
        #expect(screen.status == 0)
        let text = screen.stdout
        let spinnerAt = try #require(text.range(of: "refreshing bank…"))
        let redrawAt = try #require(text.range(of: "\u{1B}[7A\u{1B}[J"))  // up over the 7 preview lines, clear
        let preview = String(text[..<spinnerAt.lowerBound])
        let redraw = String(text[redrawAt.upperBound...])
        #expect(preview.contains("Uber") && preview.contains("1h old") && preview.contains("stale, "), "\(preview)")
        #expect(spinnerAt.lowerBound < redrawAt.lowerBound)
        #expect(redraw.contains("+ Lyft"))
        #expect(redraw.contains("~ Payroll"))
        #expect(redraw.contains("- Uber") && redraw.contains("removed"))
        #expect(redraw.contains("bank refreshed: 1 new, 1 changed, 1 removed"))
        #expect(!redraw.contains("stale"))
    }

    @Test func aTerminalSeesSkeletonRowsReplacedByData() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        try upstream.control(["delay": 1.5])
        let screen = try await box.terminal(["list", "jokes"], environment: ["NO_COLOR": ""])
        #expect(screen.status == 0)
        let text = screen.stdout
        let skeletonAt = try #require(text.range(of: "▆▆▆▆"))
        let dataAt = try #require(text.range(of: "#"))
        #expect(skeletonAt.lowerBound < dataAt.lowerBound)
        // The pulse: both shades of grey appear before the data.
        let before = String(text[..<dataAt.lowerBound])
        #expect(before.contains("\u{1B}[38;5;238m") && before.contains("\u{1B}[38;5;243m"))
        #expect(text.contains("jokes: 10 rows"))
        // Erased before the data is drawn: the cursor goes up over the 6 skeleton rows.
        #expect(before.contains("\u{1B}[6A\u{1B}[J"))
    }

    @Test func colourOnATerminalAndPlainTextWithNoColor() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try await box.cache("sync")
        let coloured = try await box.terminal(["list", "bank"], environment: ["NO_COLOR": ""]).stdout
        #expect(coloured.contains("\u{1B}[48;5;"))                // vendor badges
        #expect(coloured.contains("\u{1B}[32m+ 19.99"))           // credits green
        #expect(coloured.contains("\u{1B}[31m- 23.50"))           // debits red
        // The same vendor gets the same colour every time.
        // A terminal ends lines with "\r\n", which Swift counts as one Character.
        let starbucks = coloured.replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n").filter { $0.contains("Starbucks") }
        #expect(starbucks.count == 2 && Set(starbucks.map { $0.components(separatedBy: " S ").first! }).count == 1)

        let plain = try await box.terminal(["list", "bank"]).stdout  // NO_COLOR=1
        #expect(!plain.contains("\u{1B}["))
        #expect(try await box.cache("list", "bank").stdout.contains("\u{1B}") == false)
    }

    @Test func noWaitNeverWaitsEvenOnATerminal() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)
        try upstream.control(["delay": 6])
        let started = ContinuousClock.now
        let screen = try await box.terminal(["list", "bank", "--no-wait"])
        // Under the upstream's 6 s with room for a busy suite: it did not wait for the refresh.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(screen.status == 0)
        #expect(!screen.stdout.contains("refreshing"))
        #expect(screen.stdout.contains("Uber"))
    }
}
