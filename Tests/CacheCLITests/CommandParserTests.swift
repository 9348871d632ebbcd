import Foundation
import OfflineCache
import Testing
@testable import CacheCLI

/// Parsing is pure: arguments in, an invocation or a usage error out.
@Suite(.gated) struct CommandParserTests {
    @Test func optionsTakeValuesEitherWayAndDbGoesAnywhere() async throws {
        let a = try CommandParser.parse(["list", "jokes", "--limit", "5", "--db", "/tmp/x.db"])
        let b = try CommandParser.parse(["--db=/tmp/x.db", "list", "--limit=5", "jokes"])
        #expect(a == b)
        #expect(a.databasePath == "/tmp/x.db")
        guard case .list(let list) = a.command else { Issue.record("not a list"); return }
        #expect(list.limit == 5 && list.name == "jokes" && list.format == .human)
    }

    /// `--as-of` takes RFC 3339 (any offset, fractions, a bare date) or a duration ago, and
    /// stores it in the cache's one form; a time to come, a day a month lacks or other text is refused.
    @Test func asOfTakesRFC3339OrADurationAgo() async throws {
        func asOf(_ text: String) throws -> String? {
            guard case .list(let list) = try CommandParser.parse(["list", "bank", "--as-of", text]).command else { return nil }
            return list.asOf
        }
        #expect(try asOf("2026-11-30T09:00:00Z") == "2026-11-30T09:00:00.000Z")
        #expect(try asOf("2026-11-30t09:00:00.25z") == "2026-11-30T09:00:00.250Z")
        #expect(try asOf("2026-11-30T10:30:00+01:30") == "2026-11-30T09:00:00.000Z")
        #expect(try asOf("2026-11-30 04:00:00-05:00") == "2026-11-30T09:00:00.000Z")
        #expect(try asOf("2026-11-30") == "2026-11-30T00:00:00.000Z")
        let text = try #require(try asOf("2h"))
        let twoHours = try #require(Timestamp.parse(text))
        #expect(abs(twoHours.timeIntervalSinceNow + 7200) < 60)
        // No zone: this machine's local time, as `history` prints it (read back as local, the
        // same wall clock).
        let local = try #require(try asOf("2026-11-30 09:00:00"))
        #expect(try asOf("2026-11-30T09:00:00") == local)
        let localDate = try #require(Timestamp.parse(local))
        var seconds = time_t(localDate.timeIntervalSince1970)
        var wall = tm()
        localtime_r(&seconds, &wall)
        #expect((wall.tm_mday, wall.tm_hour, wall.tm_min, wall.tm_sec) == (30, 9, 0, 0), "\(local)")
        #expect(local.hasSuffix(".999Z"), "a whole second with no zone means that whole second: \(local)")
        let ninetyText = try #require(try asOf("1h30m"))
        let ninety = try #require(Timestamp.parse(ninetyText))
        #expect(abs(ninety.timeIntervalSinceNow + 5400) < 60)
        for bad in ["yesterday", "2026-02-30", "2026-11-30T25:00:00Z", "2026-02-30 09:00:00", "2026-11-30 09:00", "2026-11-30T09:00:00+1", "0s"] {
            #expect(throws: UsageError.self, "\(bad)") { try CommandParser.parse(["list", "bank", "--as-of", bad]) }
        }
        #expect(throws: UsageError.self) { try CommandParser.parse(["list", "bank", "--as-of", "2999-01-01T00:00:00Z"]) }
        #expect(throws: UsageError.self) { try CommandParser.parse(["list", "bank", "--as-of", "2h", "--wait"]) }
        #expect(throws: UsageError.self) { try CommandParser.parse(["list", "--as-of", "2h"]) }
        #expect(try CommandParser.parse(["log", "bank", "abc", "--json"]).command == .log(source: "bank", key: "abc", json: true))
        #expect(throws: UsageError.self) { try CommandParser.parse(["log", "bank"]) }
        #expect(try CommandParser.parse(["search", "jokes", "duck OR goose", "--limit", "3"]).command
                == .search(.init(name: "jokes", query: "duck OR goose", limit: 3)))
        #expect(throws: UsageError.self) { try CommandParser.parse(["search", "jokes", "duck", "goose"]) }
        #expect(try CommandParser.parse(["reindex"]).command == .reindex(names: []))
    }

    @Test func theTerminatorEndsOptions() async throws {
        let parsed = try CommandParser.parse(["sync", "--", "--weird-name"])
        #expect(parsed.command == .sync(.init(names: ["--weird-name"])))
    }

    @Test func sourcesAddParsesEverything() async throws {
        let parsed = try CommandParser.parse([
            "sources", "add", "bank", "--kind", "account", "--url", "https://h/acct", "--ttl", "2h", "--mode", "merge",
            "--header", "X-Api-Version: 2", "--header", "Accept-Language: en", "--token-env", "BANK_TOKEN", "--max-bytes", "1000",
        ])
        guard case .sourcesAdd(let add) = parsed.command else { Issue.record("not sources add"); return }
        #expect(add.ttlSeconds == 7200 && add.mode == .merge && add.tokenEnv == "BANK_TOKEN" && add.maxBytes == 1000)
        #expect(add.headers.map(\.line) == ["X-Api-Version: 2", "Accept-Language: en"])
    }

    @Test func syncTakesParallelAndTimeout() async throws {
        #expect(try CommandParser.parse(["sync"]).command == .sync(.init(parallel: 4)))
        let parsed = try CommandParser.parse(["sync", "a", "b", "--parallel", "2", "--timeout", "5s"])
        #expect(parsed.command == .sync(.init(names: ["a", "b"], timeout: 5, parallel: 2)))
    }

    @Test(arguments: [
        (["sync", "--quite"], "Unknown option '--quite'. Did you mean '--quiet'?"),
        (["list", "x", "--limit"], "Missing value for '--limit <n>'."),
        (["sources", "add", "x", "--kind", "jokes", "--url", "http://h", "--header", "no colon"], "Invalid value 'no colon' for '--header': expected \"Name: value\"."),
        (["sources", "add", "bad name", "--kind", "jokes", "--url", "http://h"], "Invalid source name 'bad name': use letters, digits, '-', '_' and '.'."),
        (["metrics", "now"], "Unexpected argument 'now'."),
        (["sources", "add", "x", "--kind", "json", "--url", "http://h", "--key", "id", "--rows", "results"],
         "Invalid value 'results' for '--rows': expected a path such as $, $.results or $.data.items."),
        (["sources", "add", "x", "--kind", "json", "--url", "http://h", "--key", "id", "--next", "next"],
         "Invalid value 'next' for '--next': expected link, offset, page, last-key, header:NAME, or a path such as $.next."),
        (["sources", "add", "x", "--kind", "json", "--url", "http://h"],
         "A json source needs '--key <fields>': the field or fields that identify a record."),
        (["sources", "add", "x", "--kind", "jokes", "--url", "http://h", "--key", "id"], "'--key' is for json, csv and ndjson sources."),
        (["list", "x", "--stale=yes"], "'--stale' takes no value."),
        (["sync", "--parallel", "0"], "Invalid value '0' for '--parallel': expected a number of sources from 1 to 64."),
        (["sources", "add", "x", "--kind", "jokes", "--url", "http://h", "--ca-cert", "/nonexistent/ca.pem"],
         "Invalid value '/nonexistent/ca.pem' for '--ca-cert': expected a readable PEM file of CA certificates."),
    ] as [([String], String)])
    func usageErrors(_ arguments: [String], _ message: String) {
        #expect {
            try CommandParser.parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message == message
        }
    }
}
