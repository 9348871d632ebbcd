import Foundation
import OfflineCache
import Testing

/// Offline inspection through the built binary: history, diff, sql, check, export, prune.
@Suite(.gated) struct InspectionTests {
    /// A scripted series against the bank: add (6 rows), change (one added, one amount changed,
    /// one removed), a failed sync, and a sync of nothing new.
    func scriptedSeries(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
        try box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try box.cache("sync").status == 0)
        let account = try #require((try upstream.get("/account") as? [String: Any])?["body"] as? [String: Any])
        try upstream.setAccount(try changedAccount(account))
        #expect(try box.cache("sync").status == 0)
        try upstream.control(["status": 404])
        #expect(try box.cache("sync").status == 65)
        try upstream.control(["reset": true])
        #expect(try box.cache("sync").status == 0)
    }

    @Test func historyAndDiffPrintExactlyTheEvents() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try scriptedSeries(upstream, box)

        let history = try await box.cache("history", "--json").jsonArray()
        #expect(history.map { $0["outcome"] as! String } == ["unchanged", "failed", "updated", "updated"])
        #expect(history.map { $0["run"] as! Int } == [4, 3, 2, 1])
        #expect(history[2]["inserted"] as? Int == 1 && history[2]["updated"] as? Int == 1 && history[2]["deleted"] as? Int == 1)
        #expect(history[1]["http_status"] as? Int == 404)
        #expect((history[1]["error"] as? String)?.hasPrefix("HTTP 404 from") == true)
        #expect(history[3]["inserted"] as? Int == 6 && (history[3]["bytes"] as? Int ?? 0) > 0)
        #expect(try await box.cache("history", "bank", "--limit", "1", "--json").jsonArray().count == 1)

        let human = try await box.cache("history").stdout.split(separator: "\n")
        #expect(human.count == 5)
        #expect(human[0].hasPrefix("RUN"))
        #expect(human[2].contains("failed") && human[2].contains("HTTP 404 from"))

        // The latest run that changed anything is run 2.
        let diff = try await box.cache("diff", "bank", "--json").jsonArray()
        #expect(diff.allSatisfy { $0["run"] as? Int == 2 })
        let events = Set(diff.map { "\($0["row"]!):\($0["change"]!)" })
        // The balance did not change, so the account header has no entry in run 2.
        #expect(events == ["transaction:inserted", "transaction:updated", "transaction:removed"])
        #expect(diff.count == 3)
        let updated = try #require(diff.first { $0["row"] as? String == "transaction" && $0["change"] as? String == "updated" })
        #expect((updated["before"] as? [String: Any])?["amount"] as? Double == 84.1)
        #expect((updated["after"] as? [String: Any])?["amount"] as? Double == 90.25)
        #expect((diff.first { $0["change"] as? String == "removed" }?["before"] as? [String: Any])?["vendor"] as? String == "Uber")

        let text = try await box.cache("diff", "bank").stdout
        #expect(text.hasPrefix("run 2 · bank · "))
        #expect(!text.contains("account"))
        #expect(text.contains("+ Lyft  Mon, Nov 30  - 12.50"))
        #expect(text.contains("~ Whole Foods  Sat, Nov 28  amount 84.10 → 90.25"))
        #expect(text.contains("- Uber  Sun, Nov 29  - 23.50"))

        // Run 1 loaded the six into an empty cache: one load entry, then the account's.
        let first = try await box.cache("diff", "bank", "--run", "1", "--json").jsonArray()
        #expect(first.map { "\($0["row"]!):\($0["change"]!)" } == ["transaction:loaded", "account:inserted"])
        #expect(first[0]["rows"] as? Int == 6)
        #expect(first[0]["id"] is NSNull)
        #expect(try await box.cache("diff", "bank", "--run", "1").stdout.contains("+ 6 transactions loaded into an empty cache"))
        // --since covers both runs, oldest first.
        let since = try await box.cache("diff", "bank", "--since", "1h", "--json").jsonArray()
        #expect(since.map { $0["run"] as? Int } == [1, 1] + diff.map { _ in 2 })
    }

    @Test func pruneTrimsRunsAndTheirChanges() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try scriptedSeries(upstream, box)
        try age(box.database, by: 7200)
        #expect(try await box.cache("sync", "bank").status == 0)
        let result = try await box.cache("prune", "--keep", "1h")
        #expect(result.status == 0)
        // Run 1's load and account entry, and run 2's three.
        #expect(result.stderr.contains("Pruned 4 sync runs and 5 change log entries"), "\(result.stderr)")
        #expect(try await box.cache("history", "--json").jsonArray().count == 1)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM changes").first?["n"] == "0")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM loads").first?["n"] == "0")
        #expect(try await box.cache("list", "bank", "--offline", "--json").jsonArray().count == 6)
    }

    static let writes = [
        "INSERT INTO jokes (source, id, type, setup, punchline, seen_at) VALUES ('bank', 1, 't', 's', 'p', 'x')",
        "UPDATE transactions SET amount = 0",
        "DELETE FROM transactions",
        "DROP TABLE transactions",
        "DROP VIEW cached_jokes",
        "CREATE TABLE evil (x)",
        "ALTER TABLE sources ADD COLUMN evil TEXT",
        "ATTACH DATABASE 'attached.sqlite3' AS other",
        "PRAGMA user_version = 99",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "WITH gone AS (SELECT id FROM transactions) DELETE FROM transactions WHERE id IN (SELECT id FROM gone)",
        "SELECT 1; DELETE FROM transactions",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "BEGIN IMMEDIATE",
    ]

    @Test(arguments: writes)
    func sqlRefusesWritesAndChangesNothing(_ statement: String) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: box.database))
        let wal = FileManager.default.contents(atPath: box.database + "-wal")

        let result = try await box.run(Paths.cacheBinary, ["sql", statement], environment: ["CACHE_DB": box.database])
        #expect(result.status == 64, "\(statement): \(result.stderr)")
        #expect(result.stderr.hasPrefix("cache: refused:"), "\(statement): \(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.database)) == before)
        // Opening the database may create an empty WAL file; it must gain no content.
        #expect((FileManager.default.contents(atPath: box.database + "-wal") ?? Data()) == (wal ?? Data()))
        #expect(!FileManager.default.fileExists(atPath: box.folder + "/attached.sqlite3"))
        #expect(try await box.cache("list", "bank", "--offline", "--json").jsonArray().count == 6)
    }

    @Test func sqlReadsInEveryFormat() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try await box.cache("sync")
        let query = "SELECT vendor, sum(amount) AS total, max(stale) AS stale FROM cached_transactions GROUP BY vendor ORDER BY vendor"
        let json = try await box.cache("sql", query, "--json").jsonArray()
        #expect(json.count == 5)
        #expect(json.first { $0["vendor"] as? String == "Starbucks" }?["total"] as? Double == 14.46)
        let csv = try await box.cache("sql", query, "--csv").stdout.split(separator: "\n")
        #expect(csv.first == "vendor,total,stale" && csv.count == 6)
        let table = try await box.cache("sql", "PRAGMA table_info(transactions)")
        #expect(table.status == 0 && table.stdout.contains("vendor"))
        let bad = try await box.cache("sql", "SELEC 1")
        #expect(bad.status == 64 && bad.stderr.contains("cache: the query failed: near \"SELEC\": syntax error."))
        #expect(try await box.run(Paths.cacheBinary, ["sql", "SELECT 1"], environment: ["CACHE_DB": box.folder + "/none.sqlite3"]).status == 66)
    }

    @Test func checkPassesAGoodDatabaseAndFailsADamagedCopy() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.generate(count: 3000, seed: 4)
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let good = try await box.cache("check")
        #expect(good.status == 0, "\(good.stderr)")
        let version = Migrator().latestVersion
        #expect(good.stdout == "integrity: ok\nforeign keys: ok\nsearch index: ok\nschema version: \(version) (this cache knows \(version))\n")

        // A copy (checkpointed first, through SQLite) whose pages past the first are overwritten.
        #expect(try await box.run("/usr/bin/env", ["sqlite3", box.database, "PRAGMA wal_checkpoint(TRUNCATE)"]).status == 0)
        let damaged = box.folder + "/damaged.sqlite3"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.database))
        #expect(bytes.count > 20 * 4096)
        for offset in stride(from: 4096 * 3, to: min(bytes.count, 4096 * 12), by: 1) { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31) }
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let result = try await box.run(Paths.cacheBinary, ["check", "--db", damaged])
        #expect(result.status == 74, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("cache: check:") || result.stderr.contains("malformed"), "\(result.stderr)")
        // Reading the damaged copy fails in one line that shows no internal SQL.
        for command in [["status"], ["list", "bank", "--offline"], ["history"]] {
            let read = try await box.run(Paths.cacheBinary, command + ["--db", damaged])
            #expect(read.status != 0 && read.stderr.hasPrefix("cache: "), "\(command): \(read.stderr)")
            #expect(!read.stderr.contains("SELECT") && !read.stderr.contains("executing"), "\(command): \(read.stderr)")
        }
    }

    @Test func exportStreamsWithFlatMemory() async throws {
        let box = try Sandbox()
        try await box.cache("sources", "add", "small", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        try await box.cache("sources", "add", "large", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        // Rows written straight into the table: the export reads them through the view.
        for (name, count) in [("small", 1000), ("large", 100_000)] {
            let fill = """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                INSERT INTO jokes (source, id, type, setup, punchline, seen_at)
                SELECT '\(name)', i, 'general', 'Setup number ' || i || ' is long enough to matter in memory',
                       'Punchline ' || i, '2026-11-30T00:00:00.000Z' FROM n;
                """
            #expect(try await box.run("/usr/bin/env", ["sqlite3", box.database, fill]).status == 0)
        }
        var peaks: [String: Int] = [:]
        for name in ["small", "large"] {
            for format in ["--json", "--ndjson", "--csv"] {
                let result = try await box.run("/usr/bin/env", ["bash", "-c",
                    "/usr/bin/time -f 'peak-kb %M' \(Paths.cacheBinary) export \(name) \(format) | wc -l"],
                    environment: ["CACHE_DB": box.database])
                #expect(result.status == 0)
                let lines = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                #expect(lines >= (name == "small" ? 1000 : 100_000), "\(format): \(lines) lines")
                let peak = Int(result.stderr.components(separatedBy: "peak-kb ").last!.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
                peaks["\(name) \(format)"] = max(peaks["\(name) \(format)"] ?? 0, peak)
            }
        }
        for format in ["--json", "--ndjson", "--csv"] {
            let small = peaks["small \(format)"]!, large = peaks["large \(format)"]!
            print("export \(format): 1k rows peak \(small / 1024) MiB, 100k rows peak \(large / 1024) MiB")
            #expect(large < small + 8 * 1024, "100k rows took \(large) KB against \(small) KB for 1k")
        }
        let sample = try await box.cache("export", "small", "--ndjson").stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(sample.hasPrefix("{\"id\": 1, \"type\": \"general\"") && sample.hasSuffix("\"stale\": true}"))
    }

    /// Times people read are local (TZ honoured); JSON stays UTC.
    @Test func humanTimesAreLocalAndJSONIsUTC() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let finished = try #require(try rows(box.database, "SELECT finished_at FROM sync_runs").first?["finished_at"])
        let utc = try #require(Timestamp.parse(finished))
        // Five and a half hours ahead of UTC, with no daylight saving to guess at.
        let india = try await box.cache(["history"], environment: ["TZ": "Asia/Kolkata"])
        var seconds = time_t(utc.timeIntervalSince1970 + 5.5 * 3600)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let expected = String(format: "%04d-%02d-%02d %02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                              Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        #expect(india.stdout.contains(expected), "\(india.stdout) lacks \(expected)")
        let json = try await box.cache(["history", "--json"], environment: ["TZ": "Asia/Kolkata"])
        #expect(try json.jsonArray().first?["finished_at"] as? String == finished)
    }
}
