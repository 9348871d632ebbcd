import Foundation
import Glibc
import Testing
@testable import CacheServer
@testable import OfflineCache

/// Issue 55 ("Hardening, round 5"), items 2–4: output lost to a full disk is a failure, a
/// heartbeat from the future is no measure of a follower's lag, and a server notices that its
/// path now names another file. (Item 1, `apply --prune`'s guard and names given twice, is in
/// `SourcesFileTests`.)
@Suite(.gated) struct HardeningRoundFiveTests {
    // MARK: Item 2: lost output exits 74

    /// Every command that writes data to stdout, on a cache with rows.
    static let writers: [[String]] = [
        ["export", "items", "--ndjson"], ["export", "items"], ["list", "items", "--offline", "--json"], ["list", "items", "--offline"],
        ["sources", "export"], ["sources", "list", "--json"], ["metrics"], ["status"], ["status", "--json"],
        ["sql", "SELECT name FROM sources"], ["history", "items"], ["log", "items", "1"],
    ]

    /// A write to stdout that fails (ENOSPC, EIO) is reported once, on stderr, and the command
    /// exits 74 (EX_IOERR), whatever it was doing; a closed pipe (EPIPE) still ends quietly:
    /// its reader had read enough.
    @Test(arguments: writers)
    func aFailedWriteToStdoutExits74(_ arguments: [String]) throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]"#)
        let written = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:])
        #expect(written.status == 0 && !written.stdout.isEmpty, "\(arguments): \(written.stderr)")

        for (errno, message) in [(ENOSPC, "No space left on device"), (EIO, "Input/output error")] {
            let lost = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:], stdoutFails: errno)
            #expect(lost.status == 74, "\(arguments): \(lost.status) \(lost.stderr)")
            #expect(lost.stderr.hasSuffix("cache: cannot write to stdout: \(message)\n"), "\(arguments): \(lost.stderr)")
            #expect(lost.stderr.components(separatedBy: "cannot write").count == 2, "said more than once: \(lost.stderr)")
        }
        let closed = box.runInProcess(arguments, fetcher: Fetcher(), environment: [:], stdoutFails: EPIPE)
        #expect(closed.status == 0 && !closed.stderr.contains("cannot write"), "\(arguments): \(closed.status) \(closed.stderr)")
    }

    /// The same through the built binary and a real full device: `cache export … > /dev/full`.
    @Test func anExportIntoAFullDeviceExits74() async throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]"#)
        let full = try await box.run("/bin/sh", ["-c", "exec '\(Paths.cacheBinary)' --db '\(box.database)' export items --ndjson > /dev/full"])
        #expect(full.status == 74, "\(full.status): \(full.stderr)")
        #expect(full.stderr == "cache: cannot write to stdout: No space left on device\n", "\(full.stderr)")
        let fine = try await box.run("/bin/sh", ["-c", "exec '\(Paths.cacheBinary)' --db '\(box.database)' export items --ndjson > /dev/null"])
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine.stderr)")
    }

    // MARK: Item 3: a heartbeat from the future

    /// Item 5: a record naming a field twice is bad data (65) for every kind that reads JSON
    /// records: the field named, the rows as they were. (Foundation keeps the first value; jq,
    /// JavaScript and Python the last: the cache and the next tool must not disagree.)
    @Test(arguments: [("json", #"[{"id": 1, "a": "first", "a": "second"}]"#, #"record 0: "a" is named twice"#),
                      ("ndjson", "{\"id\": 1, \"a\": \"x\"}\n{\"id\": 2, \"id\": 3}\n", #"line 2: "id" is named twice"#),
                      ("jokes", #"[{"id": 1, "type": "g", "setup": "s", "punchline": "p", "punchline": "q"}]"#, #""punchline" is named twice"#)])
    func aRecordNamingAFieldTwiceIsBadDataAndChangesNothing(_ kind: String, _ body: String, _ named: String) throws {
        let box = try Sandbox()
        let upstream = CannedUpstream()
        upstream.answer("/data", body: Data((kind == "ndjson" ? "{\"id\": 1, \"a\": \"x\"}\n" : kind == "jokes"
            ? #"[{"id": 1, "type": "g", "setup": "s", "punchline": "p"}]"# : #"[{"id": 1, "a": "x"}]"#).utf8))
        #expect(box.cli(["sources", "add", "items", "--kind", kind, "--url", upstream.baseURL + "/data"] + (kind == "jokes" ? [] : ["--key", "id"]),
                        upstream: upstream).status == 0)
        #expect(box.cli("sync", upstream: upstream).status == 0)
        let before = try cacheDump(box.database)
        upstream.answer("/data", body: Data(body.utf8))
        let sync = box.cli("sync", "items", upstream: upstream)
        #expect(sync.status == 65 && sync.stderr.contains(named) && sync.stderr.contains("is named twice in one object"), "\(sync.status) \(sync.stderr)")
        #expect(try cacheDump(box.database) == before)
    }

    /// Item 10, the command line's part: a number its field cannot hold names the field and the
    /// number (the library's typed rows say the same, `AppLibraryTests`), and changes nothing.
    @Test(arguments: [("jokes", #"[{"id": 1.5, "type": "g", "setup": "s", "punchline": "p"}]"#, "[0].id: found 1.5,"),
                      ("account", #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1e999, "transactions": []}}"#,
                       "body.currentBalance: found 1e999,")])
    func aNumberItsFieldCannotHoldIsNamedWithItsField(_ kind: String, _ body: String, _ named: String) throws {
        let box = try Sandbox()
        let upstream = CannedUpstream()
        upstream.answer("/data", body: Data(body.utf8))
        #expect(box.cli("sources", "add", "items", "--kind", kind, "--url", upstream.baseURL + "/data", upstream: upstream).status == 0)
        let sync = box.cli("sync", "items", upstream: upstream)
        #expect(sync.status == 65 && sync.stderr.contains(named) && sync.stderr.contains("which the field's type cannot hold"), "\(sync.status) \(sync.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs WHERE outcome = 'updated'").first?["n"] == "0")
    }

    @Test func aHeartbeatAheadOfTheClockIsNoMeasure() {
        #expect(ReplicaLag.measured(nil) == .unknown)
        #expect(ReplicaLag.measured(12) == .behind(seconds: 12))
        // Within the tolerance: the clocks agree well enough; no lag.
        #expect(ReplicaLag.measured(-ReplicaLag.clockTolerance) == .behind(seconds: 0))
        #expect(ReplicaLag.measured(-ReplicaLag.clockTolerance - 1) == .ahead(seconds: ReplicaLag.clockTolerance + 1))
        #expect(!ReplicaLag.ahead(seconds: 3600).isWithin(Int.max))
        #expect(ReplicaLag.worst([.behind(seconds: 1), .ahead(seconds: 9), .unknown]) == .ahead(seconds: 9))
        #expect(ReplicaLag.ahead(seconds: 9).json?.compact == "null")
    }

    /// A follower whose primary's clock ran ahead: the lag read 0 for as long as the clock was
    /// ahead (for ever, stamped 2099), so `--max-lag` and `/healthz` passed after replication
    /// stopped. Now each fails, naming the skew; a stamp a second or two ahead still passes.
    @Test func aFollowerWithAHeartbeatFromTheFutureFailsItsChecks() throws {
        let served = try InProcessServer {
            $0.readOnly = true
            $0.maxLag = 3600
        }
        let box = served.box
        func stamp(_ at: String) throws {
            try Heartbeat(CacheDatabase(path: box.database, create: false)).beat(at: at)
        }
        try stamp("2099-01-01T00:00:00.000Z")
        let check = box.cli("--read-only", "status", "--max-lag", "1h")
        #expect(check.status == 1, "\(check.status): \(check.stdout) \(check.stderr)")
        #expect(check.stdout.contains("replica: its primary's newest heartbeat is stamped ") && check.stdout.contains("d ahead of this machine's clock"),
                "\(check.stdout)")
        #expect(try box.cli("--read-only", "status", "--json").jsonArray().first?["replica_lag_s"] is NSNull)
        #expect(box.cli("--read-only", "status").stderr.contains("ahead of this machine's clock"))
        // A monitor's alert on the lag fires: the gauge is +Inf, not gone.
        #expect(box.cli("--read-only", "metrics").stdout.contains("\ncache_replica_lag_seconds +Inf\n"))

        let health = served.get("/healthz")
        #expect(health.status == 503, "\(health.status) \(health.text)")
        let body = try health.json()
        #expect(body["replica_lag_s"] is NSNull && (body["replica_clock_ahead_s"] as? Int ?? 0) > 86_400 * 365, "\(body)")
        #expect((body["error"] as? String)?.contains("ahead of this machine's clock") == true, "\(body)")
        let rows = served.get("/sources/jokes/rows?limit=1")
        #expect(rows.header("Cache-Status")?.contains("; detail=clock-ahead-") == true, "\(rows.header("Cache-Status") ?? "")")

        // Two seconds ahead: within the tolerance, 0 s behind, and healthy.
        try stamp(Timestamp.format(Date().addingTimeInterval(2)))
        let near = box.cli("--read-only", "status", "--max-lag", "1h")
        #expect(near.status == 0 && near.stdout.contains("ok: 0s behind its primary"), "\(near.stdout)")
        #expect(served.get("/healthz").status == 200)
    }
}

/// Item 4: a server notices at once that its path names another file.
extension HardeningRoundFiveTests {
    /// A cache made elsewhere, with one source `restored` synced from a file; its path. Rollback
    /// journal, as a Litestream follower's file is, so the file is the whole database.
    static func anotherCache() throws -> (box: Sandbox, path: String) {
        let other = try Sandbox()
        try other.syncedFileSource("restored", #"[{"id": 1, "name": "one"}]"#)
        try Self.rollbackJournal(other.database)
        return (other, other.database)
    }

    static func rollbackJournal(_ path: String) throws {
        let mode = try CacheDatabase(path: path, create: false).connection.scalarText("PRAGMA journal_mode = DELETE")
        #expect(mode == "delete", "\(path) is still \(mode ?? "?")")
    }

    static func names(_ response: HTTPResponse) throws -> [String] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.bytes)) as? [[String: Any]], "\(response.text)")
            .compactMap { $0["source"] as? String }
    }

    /// The README's fix for a damaged replica — move it aside, restore again — left a follower's
    /// `serve` reading the old file for good. Now the next request reads the file the path names,
    /// and the events follow it: every stream ends, and a client that reconnects is served from
    /// the new file's history.
    @Test func aFollowerRestoredInPlaceIsServedAtOnce() throws {
        // The follower: a copy of the synced cache, in rollback-journal mode as Litestream's
        // restores are, which only this server reads.
        let served = try InProcessServer { settings in
            let follower = settings.databasePath + ".follower"
            _ = try? CacheDatabase(path: settings.databasePath, create: false).connection.execute("VACUUM INTO '\(follower)'")
            settings.databasePaths = [follower]
            settings.readOnly = true
        }
        let box = served.box
        let path = served.server.settings.databasePath
        try Self.rollbackJournal(path)
        try served.server.events.start()
        defer { served.server.events.stop() }
        let stream = served.get("/events")
        guard case .stream(let next) = stream.body else { throw TestFailure("not a stream") }
        let hello = String(decoding: try next() ?? [], as: UTF8.self)
        let cursor = try #require(hello.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))
        #expect(try Self.names(served.get("/sources")) == ["bank", "jokes"])

        let (other, restored) = try Self.anotherCache()
        #expect(rename(path, path + ".damaged") == 0 && rename(restored, path) == 0)
        #expect(try Self.names(served.get("/sources")) == ["restored"], "the old file is still served")
        #expect(served.get("/sources/jokes/rows").status == 404)
        #expect(try served.get("/sources/restored/rows").json()["rows"].map { ($0 as? [Any])?.count } == 1)

        // The stream of the old file ends (its run numbers mean nothing in the new one) …
        let deadline = Date().addingTimeInterval(20)
        while let chunk = try next() {
            #expect(!String(decoding: chunk, as: UTF8.self).contains("event:"), "an event from the old file")
            if Date() > deadline { Issue.record("the stream of the replaced file did not end"); break }
        }
        // … and one resumed from its cursor is served from the new file: a sync there is announced.
        let resumed = served.get("/events", headers: [("Last-Event-ID", String(cursor))])
        guard case .stream(let follow) = resumed.body else { throw TestFailure("not a stream") }
        _ = try follow()
        try Data(#"[{"id": 1, "name": "uno"}]"#.utf8).write(to: URL(fileURLWithPath: other.folder + "/restored.json"))
        let synced = box.cli(["--db", path, "sync", "restored"])  // as Litestream would bring the primary's sync here
        #expect(synced.status == 0, "\(synced.stderr)")
        var said = ""
        while !said.contains("event: updated"), Date() < deadline, let chunk = try follow() { said += String(decoding: chunk, as: UTF8.self) }
        #expect(said.contains("event: updated") && said.contains(#""source": "restored""#), "\(said)")
    }

    /// On a primary: after its file is deleted, `/healthz` is 503 (it said 200 over rows nobody
    /// else could reach); after an atomic replace, the new file is served.
    @Test func aPrimaryWhoseFileIsGoneIsNotHealthy() throws {
        let served = try InProcessServer()
        let box = served.box
        #expect(served.get("/healthz").status == 200)
        for suffix in ["", "-wal", "-shm"] { unlink(box.database + suffix) }
        let gone = served.get("/healthz")
        #expect(gone.status == 503 && gone.header("Retry-After") != nil && gone.text.contains("is gone (deleted, or moved away)"),
                "\(gone.status) \(gone.text)")

        let (other, replacement) = try Self.anotherCache()
        defer { withExtendedLifetime(other) {} }
        #expect(rename(replacement, box.database) == 0)
        #expect(served.get("/healthz").status == 200)
        #expect(try Self.names(served.get("/sources")) == ["restored"])
    }
}

/// Item 9: of several `--db` files, a read that fails names the file that failed.
extension HardeningRoundFiveTests {
    @Test func aDamagedSecondFileIsTheOneNamed() throws {
        let healthy = try Sandbox(), damaged = try Sandbox()
        try healthy.syncedFileSource("items", #"[{"id": 1}]"#)
        let many = (1...3000).map { #"{"id": \#($0), "text": "\#(String(repeating: "row \($0) ", count: 8))"}"# }.joined(separator: ",")
        try damaged.syncedFileSource("others", "[" + many + "]")
        #expect(try CacheDatabase(path: damaged.database, create: false).connection.scalarText("PRAGMA journal_mode = DELETE") == "delete")
        // Pages late in the file overwritten: the rows' table reads as damaged, while the
        // schema and the sources table, read when the files are opened, do not (so `sql`, which
        // reads the second file through the first's connection, meets it in its query alone).
        let handle = try #require(FileHandle(forUpdatingAtPath: damaged.database))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size * 2 / 3)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size / 4)))
        try handle.close()

        for arguments in [["list", "others", "--offline"], ["export", "others"], ["sql", "SELECT count(*) FROM db2.records"]] {
            let read = healthy.cli(["--db", healthy.database, "--db", damaged.database] + arguments)
            #expect(read.status == 74, "\(arguments): \(read.status) \(read.stderr)")
            #expect(read.stderr.contains("If \(damaged.database) is a Litestream replica") && !read.stderr.contains("If \(healthy.database) "),
                    "\(arguments): \(read.stderr)")
        }
    }
}
