import Foundation
import OfflineCache
import Testing

/// What hostile or careless upstreams sent that the cache once got wrong, each through the
/// built binary against the loopback upstream.
@Suite(.gated) struct HostileUpstreamTests {
    func account(_ transactions: [[String: Any]]) -> [String: Any] {
        ["name": "Hostile", "currentBalance": 1, "transactions": transactions]
    }

    func bank(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
        #expect(try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)
    }

    /// A NUL inside text is data: once it cut the value short, two such vendors on one date
    /// collided and the source could never sync again.
    @Test func textWithNULIsStoredWhole() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try upstream.setAccount(account([
            ["type": 1, "vendor": "a\u{0}b", "amount": 1, "date": "2026-11-01 10:00:00"],
            ["type": 1, "vendor": "a\u{0}c", "amount": 2, "date": "2026-11-01 10:00:00"],
        ]))
        for _ in 0..<2 {
            let result = try await box.cache("sync", "bank")
            #expect(result.status == 0, "\(result.stderr)")
        }
        let listed = try await box.cache("list", "bank", "--json", "--offline").jsonArray()
        #expect(Set(listed.compactMap { $0["vendor"] as? String }) == ["a\u{0}b", "a\u{0}c"])
        #expect(try rows(box.database, "SELECT length(CAST(vendor AS BLOB)) AS n FROM transactions").map { $0["n"] } == ["3", "3"])
        // On a terminal-bound human listing the NUL is shown escaped, not raw.
        let human = try await box.cache("list", "bank", "--offline")
        #expect(!human.stdout.contains("\u{0}") && human.stdout.contains("a\\u{0"), "\(human.stdout.debugDescription)")
    }

    @Test func aNegativeAmountKeepsItsSign() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try upstream.setAccount(account([
            ["type": 0, "vendor": "Chargeback", "amount": -10, "date": "2026-11-01 10:00:00"],
            ["type": 1, "vendor": "Coffee", "amount": 3.5, "date": "2026-11-02 10:00:00"],
        ]))
        #expect(try await box.cache("sync", "bank").status == 0)
        let lines = try await box.cache("list", "bank", "--offline").stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("Chargeback") && $0.hasSuffix("+ -10.00") }, "\(lines)")
        #expect(lines.contains { $0.contains("Coffee") && $0.hasSuffix("- 3.50") }, "\(lines)")
    }

    @Test(arguments: ["2026-02-30 10:00:00", "2025-02-29 10:00:00", "2026-04-31 00:00:00"])
    func anImpossibleDateIsBadData(_ date: String) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        #expect(try await box.cache("sync", "bank").status == 0)
        let before = try cacheDump(box.database)
        try upstream.setAccount(account([
            ["type": 1, "vendor": "Fine", "amount": 1, "date": "2024-02-29 10:00:00"],  // a leap day
            ["type": 1, "vendor": "Impossible", "amount": 1, "date": date],
        ]))
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("body.transactions[1].date: expected yyyy-MM-dd HH:mm:ss, got \"\(date)\""), "\(result.stderr)")
        #expect(try cacheDump(box.database) == before)
    }

    /// A 304 to a request that sent no validator confirms nothing: once it set last_success
    /// with no rows and `--if-stale` skipped the source for a whole TTL.
    @Test func notModifiedWithoutAValidatorIsAProtocolError() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try upstream.control(["always_304": true])
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("HTTP 304 Not Modified, but no validator was sent"), "\(result.stderr)")
        let status = try #require(try await box.cache("status", "--json").jsonArray().first)
        #expect(status["last_success_at"] is NSNull)
        // Cron still treats it as due once upstream recovers and the backoff has passed.
        try upstream.control(["reset": true])
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "6")
    }

    /// A 3 MB envelope message is stored and printed cut to 500 characters, saying how long it was.
    @Test func aHugeErrorMessageIsCapped() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        let message = String(repeating: "x", count: 3_000_000)
        try upstream.control(["fault": "envelope-error", "message": message])
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 65)
        #expect(result.stderr.utf8.count < 1_000, "stderr is \(result.stderr.utf8.count) bytes")
        #expect(result.stderr.contains("bytes in all)"), "\(result.stderr.prefix(200))")
        let stored = try rows(box.database, "SELECT length(error) AS n FROM sync_runs").first?["n"]
        #expect(Int(stored ?? "") ?? .max < 1_000, "stored \(stored ?? "nothing")")
        #expect(try await box.cache("status").stdout.utf8.count < 2_000)
    }

    /// A source removed and added again (as another kind) while its sync waits on upstream:
    /// the old sync writes nothing into the new source, and says why.
    @Test func aSourceReplacedDuringItsSyncGetsNothingFromIt() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try upstream.control(["delay": 2])
        let sync = try box.start(["sync", "bank"])
        // Wait until the request reached the upstream, then replace the source.
        let deadline = ContinuousClock.now + .seconds(10)
        while try upstreamRequests(upstream).isEmpty && ContinuousClock.now < deadline { try await pause(0.05) }
        #expect(try await box.cache("sources", "remove", "bank", "--yes").status == 0)
        #expect(try await box.cache("sources", "add", "bank", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten").status == 0)
        let (result, _) = await sync.finished()
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("the source 'bank' was removed or changed during the sync; nothing was written"), "\(result.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "0")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM accounts").first?["n"] == "0")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "0")
        let status = try #require(try await box.cache("status", "--json").jsonArray().first)
        #expect(status["last_success_at"] is NSNull)
    }

    /// Terminal escapes, a carriage return, BEL, a C1 control and a right-to-left override in
    /// upstream text: escaped wherever stdout is a terminal, written as they are into a pipe.
    @Test func controlCharactersReachNoTerminal() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        let hostile = "evil\u{1B}]0;pwned\u{07}\rback\u{85}\u{202E}txt"
        try upstream.setAccount(account([["type": 1, "vendor": hostile, "amount": 1, "date": "2026-11-01 10:00:00"]]))
        #expect(try await box.cache("sync", "bank").status == 0)

        func isRaw(_ text: String) -> Bool {
            // A pty turns each "\n" into "\r\n": only a CR before something else is upstream's.
            let scalars = Array(text.unicodeScalars)
            return scalars.enumerated().contains { index, scalar in
                [0x1B, 0x07, 0x85, 0x202E].contains(scalar.value)
                    || (scalar == "\r" && (index + 1 == scalars.count || scalars[index + 1] != "\n"))
            }
        }
        for arguments in [["list", "bank", "--offline", "--csv"], ["list", "bank", "--offline", "--json"],
                          ["export", "bank", "--csv"], ["export", "bank", "--ndjson"],
                          ["sql", "SELECT vendor FROM transactions", "--csv"], ["sql", "SELECT vendor FROM transactions"],
                          ["list", "bank", "--offline"], ["history", "--json"]] {
            let shown = try await box.terminal(arguments)
            #expect(shown.status == 0, "\(arguments): \(shown.stderr)")
            #expect(!isRaw(shown.stdout), "\(arguments) wrote raw controls to a terminal: \(shown.stdout.debugDescription)")
        }
        // On a terminal the JSON still parses to the same text: its escapes are JSON's own.
        let onTerminal = try await box.terminal(["list", "bank", "--offline", "--json"]).stdout
        #expect(onTerminal.contains("\\u0085") && onTerminal.contains("\\u202e"), "\(onTerminal.debugDescription)")
        let parsed = try JSONSerialization.jsonObject(with: Data(onTerminal.utf8)) as? [[String: Any]]
        #expect(parsed?.first?["vendor"] as? String == hostile)
        // Into a pipe, the data as it is.
        let piped = try await box.cache("list", "bank", "--offline", "--csv")
        #expect(piped.stdout.contains(hostile), "\(piped.stdout.debugDescription)")
    }

    /// A date of another year says its year; this year's do not.
    @Test func datesFromAnotherYearShowTheYear() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        var now = time_t(Date().timeIntervalSince1970)
        var today = tm()
        gmtime_r(&now, &today)
        let thisYear = Int(today.tm_year) + 1900
        try upstream.setAccount(account([
            ["type": 1, "vendor": "Old", "amount": 1, "date": "2025-11-28 10:00:00"],
            ["type": 1, "vendor": "New", "amount": 1, "date": "\(thisYear)-01-02 10:00:00"],
        ]))
        #expect(try await box.cache("sync", "bank").status == 0)
        let lines = try await box.cache("list", "bank", "--offline").stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("Old") && $0.contains("Fri, Nov 28 2025") } || thisYear == 2025, "\(lines)")
        #expect(lines.contains { $0.contains("New") && $0.contains("Jan  2") && !$0.contains("\(thisYear)") }, "\(lines)")
    }
}
