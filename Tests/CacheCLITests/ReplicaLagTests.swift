import Foundation
import Testing

/// A follower that knows how far behind its primary it is: every `cache sync` on the primary
/// stamps a heartbeat that replicates with the file; a read-only copy measures its age.
@Suite(.gated) struct ReplicaLagTests {
    func sqlite3(_ box: Sandbox, _ path: String, _ sql: String) async throws -> String {
        let result = try await box.run("/usr/bin/sqlite3", [path, sql])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aFollowerSaysHowFarBehindItIsAndFailsPastTheBound() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "1h").status == 0)
        #expect(try await box.cache("sync", "--plan").status == 0)
        #expect(try await sqlite3(box, box.database, "SELECT count(*) FROM heartbeat") == "0", "a --plan stamped the heartbeat")
        #expect(try await box.cache("sync").status == 0)
        let first = try await sqlite3(box, box.database, "SELECT at FROM heartbeat")
        #expect(!first.isEmpty)
        // A timer's run that finds nothing stale stamps it too.
        try await pause(0.01)
        let idle = try await box.cache("sync", "--if-stale", "--quiet")
        #expect(idle.status == 0 && idle.stdout.isEmpty)
        #expect(try await sqlite3(box, box.database, "SELECT at FROM heartbeat") > first, "an idle --if-stale run did not stamp the heartbeat")

        // On the primary: no lag, and --max-lag passes.
        #expect(try await box.cache("status", "--json").jsonArray().first?.keys.contains("replica_lag_s") == false)
        let primary = try await box.cache("status", "--max-lag", "1s")
        #expect(primary.status == 0 && primary.stdout == "ok: a primary (writable), behind nothing\n", "\(primary.stdout)")

        // A follower whose primary last synced 10 s ago (its copy of the file says so).
        let follower = box.folder + "/follower.sqlite3"
        _ = try await sqlite3(box, box.database, ".backup '\(follower)'")
        _ = try await sqlite3(box, follower, "UPDATE heartbeat SET at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-10 seconds')")
        // The lag grows while the checks run (minutes on a loaded machine), so each one allows
        // 10 s plus the time since the stamp, never a fixed ceiling.
        let stamped = Date()
        func isTheLag(_ seconds: Double?) -> Bool {
            guard let seconds else { return false }
            return seconds >= 10 && seconds <= 11 + Date().timeIntervalSince(stamped)
        }
        func number(after prefix: String, in text: String) -> Double? {
            guard let start = text.range(of: prefix)?.upperBound else { return nil }
            return Double(text[start...].prefix { $0.isNumber })
        }
        func onFollower(_ arguments: String...) async throws -> RunResult {
            try await box.run(Paths.cacheBinary, ["--read-only", "--db", follower] + arguments)
        }
        let lag = try #require(try await onFollower("status", "--json").jsonArray().first?["replica_lag_s"] as? Int)
        #expect(isTheLag(Double(lag)), "\(lag)")
        let late = try await onFollower("status", "--max-lag", "3s")
        #expect(late.status == 1, "\(late.stdout) \(late.stderr)")
        #expect(isTheLag(number(after: "replica: ", in: late.stdout)) && late.stdout.contains("s behind its primary (its newest heartbeat), more than 3s by "), "\(late.stdout)")
        #expect(try await onFollower("status", "--max-lag", "1m").status == 0)
        // With --max-age too: either failing fails the check.
        #expect(try await onFollower("status", "--max-age", "1d", "--max-lag", "3s").status == 1)
        #expect(try await onFollower("status", "--max-age", "1d", "--max-lag", "1m").status == 0)
        let human = try await onFollower("status")
        #expect(isTheLag(number(after: "its primary's newest heartbeat is ", in: human.stderr)) && human.stderr.contains("s old (its lag, at most)"), "\(human.stderr)")
        let metrics = try await onFollower("metrics")
        let gauge = try #require(metrics.stdout.split(separator: "\n").first { $0.hasPrefix("cache_replica_lag_seconds ") })
        #expect(isTheLag(Double(gauge.split(separator: " ").last ?? "")), "\(gauge)")
        #expect(!(try await box.cache("metrics").stdout.contains("cache_replica_lag_seconds")), "a primary reports a lag")

        // cache serve on the follower: /healthz drains it past --max-lag; the rows carry the lag.
        let server = try ServeProcess(box, ["--max-lag", "3s"], environment: ["CACHE_DB": follower, "CACHE_READ_ONLY": "1"])
        let health = try server.get("/healthz")
        #expect(health.status == 503 && health.headers["retry-after"] != nil, "\(health.status) \(health.text)")
        let healthBody = try health.json()
        #expect(isTheLag((healthBody["replica_lag_s"] as? Int).map(Double.init)), "\(healthBody)")
        #expect(healthBody["max_lag_s"] as? Int == 3)
        let rows = try server.get("/sources/jokes/rows?limit=1")
        #expect(rows.status == 200)
        #expect(isTheLag(number(after: "; detail=lag-", in: rows.headers["cache-status"] ?? "")), "\(rows.headers["cache-status"] ?? "")")
        #expect(isTheLag((try rows.json()["replica_lag_s"] as? Int).map(Double.init)))
        let relaxed = try ServeProcess(box, ["--max-lag", "1m"], environment: ["CACHE_DB": follower, "CACHE_READ_ONLY": "1"])
        #expect(try relaxed.get("/healthz").status == 200)

        // A follower that never received a heartbeat cannot say it is within any bound.
        _ = try await sqlite3(box, follower, "DELETE FROM heartbeat")
        let unknown = try await onFollower("status", "--max-lag", "1h")
        #expect(unknown.status == 1 && unknown.stdout.contains("no heartbeat from its primary yet"), "\(unknown.stdout)")
        #expect(try await onFollower("status", "--json").jsonArray().first?["replica_lag_s"] is NSNull)
    }
}
