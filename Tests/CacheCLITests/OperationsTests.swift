import Foundation
import OfflineCache
import Testing

/// For the people running the cache: a freshness check for monitors, Prometheus metrics, and
/// what `sync --json` says about waiting. Through the built binary, against the loopback upstream.
@Suite(.gated) struct OperationsTests {
    func bank(_ upstream: LoopbackUpstream, _ box: Sandbox, _ extra: [String] = []) throws {
        #expect(try box.cache(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"] + extra).status == 0)
    }

    @Test func aFreshSourcePassesTheCheckInOneQuietLine() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        #expect(try await box.cache("sync").status == 0)
        let check = try await box.cache("status", "--max-age", "1h")
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout == "ok: 1 source synced within their max age\n")
        #expect(check.stderr.isEmpty)
    }

    @Test func aSourceFailingPastTheAgeFailsTheCheckByName() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        #expect(try await box.cache("sync").status == 0)
        try upstream.control(["status": 503])
        try age(box.database, by: 7200)
        #expect(try await box.cache("sync", "bank").status == 75)
        let check = try await box.cache("status", "--max-age", "1h", "bank")  // the last success is two hours old
        #expect(check.status == 1, "\(check.stdout)")
        #expect(check.stdout.hasPrefix("bank: no successful sync for "), "\(check.stdout)")
        #expect(check.stdout.contains("more than 1h; last error: HTTP 503 from"), "\(check.stdout)")
        // Only the named source was checked; all of them, both late here, without a name.
        #expect(!check.stdout.contains("jokes"))
        let all = try await box.cache("status", "--max-age", "1h")
        #expect(all.status == 1 && all.stdout.split(separator: "\n").count == 2, "\(all.stdout)")
        // Within a longer limit, both are fine.
        let json = try await box.cache("status", "--max-age", "3h", "--json")
        #expect(json.status == 0)
        #expect(try json.jsonArray().allSatisfy { $0["ok"] as? Bool == true && $0["max_age_s"] as? Int == 10800 })
    }

    @Test func aSourceWithItsOwnAlertAfterIsJudgedByIt() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box, ["--alert-after", "1h"])
        #expect(try await box.cache("sync").status == 0)
        try age(box.database, by: 7200)
        // A source's own --alert-after wins over --max-age.
        let check = try await box.cache("status", "--max-age", "1d", "--json")
        #expect(check.status == 1)
        let verdict = try #require(try check.jsonArray().first)
        #expect(verdict["ok"] as? Bool == false && verdict["max_age_s"] as? Int == 3600)
        #expect(try await box.cache("sources", "list", "--json").jsonArray().first?["alert_after_s"] as? Int == 3600)
    }

    @Test func aSourceThatNeverSyncedFailsTheCheck() async throws {
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/account")
        let check = try await box.cache("status", "--max-age", "1d")
        #expect(check.status == 1)
        #expect(check.stdout == "bank: never synced successfully\n", "\(check.stdout)")
        #expect(try await box.cache("status", "--max-age", "1d", "nope").status == 66)
    }

    /// Whether Prometheus's parser is here (`Scripts/test-venv`); the test that needs it is
    /// skipped, as skipped, without.
    static var parserInstalled: Bool { TestTools.available(for: "the Prometheus parser test") }

    @Test(.enabled(if: parserInstalled, "the Prometheus parser could not be installed"))
    func metricsParseAsPrometheusAndAgreeWithStatus() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        try await box.cache("sources", "add", "never", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        #expect(try await box.cache("sync", "bank", "jokes").status == 0)
        try upstream.control(["status": 500])
        #expect(try await box.cache("sync", "bank").status == 75)

        let metrics = try await box.cache("metrics")
        #expect(metrics.status == 0, "\(metrics.stderr)")
        let python = try TestTools.python.get()
        let file = box.folder + "/metrics.txt"
        try Data(metrics.stdout.utf8).write(to: URL(fileURLWithPath: file))
        let parse = try await box.run(python, ["-c", """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            samples = []
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    samples.append({"family": family.name, "type": family.type, "name": s.name, "labels": s.labels, "value": s.value})
            print(json.dumps(samples))
            """, file])
        #expect(parse.status == 0, "the parser refused the metrics: \(parse.stderr)")
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(parse.stdout.utf8)) as? [[String: Any]])
        func value(_ name: String, _ source: String, outcome: String? = nil) -> Double? {
            samples.first { sample in
                let labels = sample["labels"] as? [String: String] ?? [:]
                return sample["name"] as? String == name && labels["source"] == source && labels["outcome"] == outcome
            }?["value"] as? Double
        }

        let statuses = try await box.cache("status", "--json").jsonArray()
        for status in statuses {
            let name = status["source"] as! String
            #expect(value("cache_rows", name) == Double(status["rows"] as! Int), "\(name)")
            #expect(value("cache_stale_rows", name) == Double(status["stale_rows"] as! Int), "\(name)")
            let success = (status["last_success_at"] as? String).flatMap(Timestamp.parse)?.timeIntervalSince1970
            #expect(value("cache_last_success_timestamp_seconds", name).map { abs($0 - success!) < 0.001 } ?? (success == nil), "\(name)")
        }
        #expect(value("cache_consecutive_failures", "bank") == 1)
        #expect(value("cache_consecutive_failures", "jokes") == 0)
        #expect(value("cache_held", "bank") == 0 && value("cache_search_index_damaged", "bank") == 0)
        // The README's alert rules use only metrics that are exposed.
        let readme = Docs.manual
        let rules = try #require(readme.range(of: "- alert: CacheSourceOld").map { String(readme[$0.lowerBound...].prefix(1200)) })
        let named = Set(rules.split(whereSeparator: { !($0.isLetter || $0 == "_") }).filter { $0.hasPrefix("cache_") }.map(String.init))
        #expect(named == ["cache_last_success_timestamp_seconds", "cache_held"], "\(named)")
        for name in named { #expect(samples.contains { $0["name"] as? String == name }, "\(name)") }
        #expect(value("cache_last_http_status", "bank") == 500)
        #expect(value("cache_sync_runs_total", "bank", outcome: "updated") == 1)
        #expect(value("cache_sync_runs_total", "bank", outcome: "failed") == 1)
        #expect(value("cache_last_sync_bytes", "jokes").map { $0 > 0 } == true)
        #expect(value("cache_last_success_timestamp_seconds", "never") == nil)
        #expect(samples.contains { $0["family"] as? String == "cache_sync_runs" && $0["type"] as? String == "counter" })
    }

    @Test func theTextfileIsWrittenWhole() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        #expect(try await box.cache("sync").status == 0)
        let target = box.folder + "/cache.prom"
        let written = try await box.cache("metrics", "--textfile", target)
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        #expect((try? String(contentsOfFile: target, encoding: .utf8)) == (try await box.cache("metrics").stdout))
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.folder).filter { $0.hasSuffix(".tmp") }.isEmpty)
        let nowhere = try await box.cache("metrics", "--textfile", box.folder + "/missing/cache.prom")
        #expect(nowhere.status == 73, "\(nowhere.stderr)")
    }

    @Test func syncJSONSaysNotModifiedAndTheWaitUpstreamAskedFor() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try bank(upstream, box)
        try upstream.control(["validators": true])
        let first = try #require(try await box.cache("sync", "--json").jsonArray().first)
        #expect(first["not_modified"] as? Bool == false && first["retry_after_wait_s"] as? Double == 0)
        let second = try #require(try await box.cache("sync", "--json").jsonArray().first)
        #expect(second["not_modified"] as? Bool == true && second["attempts"] as? Int == 1)

        try upstream.control(["status": 429, "retry_after": "1"])
        let limited = try await box.cache("sync", "--json")
        let report = try #require(try limited.jsonArray().first)
        #expect(report["attempts"] as? Int == 3)
        #expect(report["retry_after_wait_s"] as? Double == 2, "\(report)")
    }
}
