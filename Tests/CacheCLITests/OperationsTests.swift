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
        let rules = try #require(readme.range(of: "- alert: CacheSourceOld").map { String(readme[$0.lowerBound...].components(separatedBy: "```")[0]) })
        let named = Set(rules.split(whereSeparator: { !($0.isLetter || $0 == "_") }).filter { $0.hasPrefix("cache_") }.map(String.init))
        #expect(named == ["cache_last_success_timestamp_seconds", "cache_added_timestamp_seconds", "cache_held",
                          "cache_outbox_oldest_edit_age_seconds", "cache_outbox_edits"], "\(named)")
        // (The outbox's figures have samples only for sources that keep records, and its age
        // only while an edit waits: their families are there.)
        for name in named { #expect(metrics.stdout.contains("# TYPE \(name) gauge"), "\(name)") }
        #expect(value("cache_last_http_status", "bank") == 500)
        #expect(value("cache_sync_runs_total", "bank", outcome: "updated") == 1)
        #expect(value("cache_sync_runs_total", "bank", outcome: "failed") == 1)
        #expect(value("cache_last_sync_bytes", "jokes").map { $0 > 0 } == true)
        #expect(value("cache_last_success_timestamp_seconds", "never") == nil)
        #expect(samples.contains { $0["family"] as? String == "cache_sync_runs" && $0["type"] as? String == "counter" })
    }

    /// The manual's alert rules (its one ```yaml block with `groups:`, a complete rule file) pass
    /// Prometheus's own `promtool check rules`, and `promtool test rules` sees each fire for the
    /// source it is about and no other: one grown old, one that never synced (no last-success
    /// sample at all), one held, an edit waiting for hours, edits in conflict; not a fresh source,
    /// one added a moment ago, an edit a minute old, nor queued edits. The exposition
    /// `cache metrics` writes for such sources passes `promtool check metrics`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool"), "promtool is not installed (.ci/run installs Debian's prometheus)"))
    func theAlertRulesFireForOldNeverSyncedAndHeldSources() async throws {
        let blocks = Docs.manual.components(separatedBy: "```yaml\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let ruleFiles = blocks.filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("groups:") }
        #expect(ruleFiles.count == 1, "the manual has \(ruleFiles.count) rule files")
        let block = try #require(ruleFiles.first)
        let indent = block.prefix { $0 == " " }.count
        var rules = ""
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            let spaces = line.prefix { $0 == " " }.count
            rules += line.dropFirst(min(indent, spaces)) + "\n"
        }
        let box = try Sandbox()
        try rules.write(toFile: box.folder + "/rules.yml", atomically: true, encoding: .utf8)
        let checked = try await box.run("/usr/bin/promtool", ["check", "rules", box.folder + "/rules.yml"])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        func series(_ name: String, _ source: String, _ value: Int) -> String {
            "      - series: '\(name){source=\"\(source)\"}'\n        values: '\(value)x200'\n"
        }
        func expect(_ alert: String, _ source: String, _ summary: String) -> String {
            "      - eval_time: 3h\n        alertname: \(alert)\n        exp_alerts:\n          - exp_labels: {source: \(source)}\n            exp_annotations: {summary: \"\(summary)\"}\n"
        }
        // Three hours in (10,800 s): "old" last succeeded at 0, "fresh" at 10,000; "never" was
        // added at 0 and "new" at 10,000, neither with a success.
        let tests = "rule_files:\n  - rules.yml\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
            + series("cache_last_success_timestamp_seconds", "old", 0) + series("cache_added_timestamp_seconds", "old", 0)
            + series("cache_last_success_timestamp_seconds", "fresh", 10_000) + series("cache_added_timestamp_seconds", "fresh", 0)
            + series("cache_added_timestamp_seconds", "never", 0) + series("cache_added_timestamp_seconds", "new", 10_000)
            + series("cache_held", "held", 1) + series("cache_held", "old", 0)
            + series("cache_outbox_oldest_edit_age_seconds", "waiting", 7_200) + series("cache_outbox_oldest_edit_age_seconds", "old", 60)
            + "      - series: 'cache_outbox_edits{source=\"tasks\",state=\"conflict\"}'\n        values: '2x200'\n"
            + "      - series: 'cache_outbox_edits{source=\"tasks\",state=\"queued\"}'\n        values: '5x200'\n"
            + "      - series: 'cache_outbox_edits{source=\"old\",state=\"rejected\"}'\n        values: '0x200'\n"
            + "    alert_rule_test:\n"
            + expect("CacheSourceOld", "old", "cache source old has not synced successfully for over 2h")
            + expect("CacheSourceNeverSynced", "never", "cache source never was added over 2h ago and has never synced successfully")
            + expect("CacheSourceHeld", "held", "the removal guard holds held: 'cache sync held --plan' shows what it would remove")
            + expect("CacheEditWaiting", "waiting", "a local edit of waiting has waited over 1h for its upstream: 'cache outbox' says why")
            + "      - eval_time: 3h\n        alertname: CacheEditNeedsAPerson\n        exp_alerts:\n          - exp_labels: {source: tasks, state: conflict}\n"
            + "            exp_annotations: {summary: \"2 local edit(s) of tasks in conflict: 'cache outbox' shows them, 'cache outbox resolve' or 'drop' settles them\"}\n"
        try tests.write(toFile: box.folder + "/tests.yml", atomically: true, encoding: .utf8)
        let tested = try await box.run("/usr/bin/promtool", ["test", "rules", box.folder + "/tests.yml"])
        #expect(tested.status == 0, "\(tested.stdout)\(tested.stderr)")

        // What cache metrics writes for a source that never synced: the added time, no success.
        let upstream = try LoopbackUpstream()
        try bank(upstream, box)
        let exposition = try await box.cache("metrics").stdout
        #expect(exposition.contains("cache_added_timestamp_seconds{source=\"bank\"}") && !exposition.contains("cache_last_success_timestamp_seconds{"))
        try exposition.write(toFile: box.folder + "/cache.prom", atomically: true, encoding: .utf8)
        let linted = try await box.run("/bin/sh", ["-c", "/usr/bin/promtool check metrics < '\(box.folder)/cache.prom'"])
        #expect(linted.status == 0, "\(linted.stdout)\(linted.stderr)")
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
