import Foundation
import OfflineCache
import Testing

/// What a hostile pass found (issue 21), each through the built binary: sizes a peer or a
/// setting picks, file sources that are not files, and the rest.
@Suite(.gated) struct HardeningTests {
    func bank(_ upstream: LoopbackUpstream, _ box: Sandbox, _ extra: [String] = []) async throws {
        let added = try await box.cache(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"] + extra)
        #expect(added.status == 0, "\(added.stderr)")
    }

    func runs(_ box: Sandbox) throws -> [String] {
        try rows(box.database, "SELECT outcome FROM sync_runs ORDER BY id").compactMap { $0["outcome"] }
    }

    /// A cap past what any machine holds is refused when it is set, and one stored before the
    /// bound (or written by hand) is held to it when a sync reads it.
    @Test func maxBytesIsBoundedWhereItIsSet() async throws {
        let box = try Sandbox()
        for huge in ["1000000000000", "9223372036854775807", "99999999999999999999999"] {
            let added = try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:1/account",
                                            "--max-bytes", huge)
            #expect(added.status == 64, "\(huge): \(added.stderr)")
            #expect(added.stderr.contains("from 1 to 17179869184 (16 GiB)"), "\(added.stderr)")
        }
        #expect(try await box.cache("sources", "list").stdout.contains("No sources") || !FileManager.default.fileExists(atPath: box.database))
        // 16 GiB itself is accepted, by add and by set.
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:1/account",
                                    "--max-bytes", "17179869184").status == 0)
        #expect(try await box.cache("sources", "set", "bank", "--max-bytes", "17179869185").status == 64)
    }

    /// A file source whose cap is the largest integer (written before the bound) syncs: the
    /// read's arithmetic cannot overflow (it once crashed on `maxBytes + 1`).
    @Test func aFileSourceWithTheLargestStoredCapSyncs() async throws {
        let box = try Sandbox()
        let file = box.folder + "/jokes.json"
        try Data(#"[{"id": 1, "type": "general", "setup": "Why?", "punchline": "Because."}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", "file://" + file).status == 0)
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "UPDATE sources SET settings = json_set(settings, '$.\"max-bytes\"', '9223372036854775807')"])
        let synced = try await box.cache("sync", "jokes")
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM jokes").first?["n"] == "1")
    }

    /// A peer announcing 100 GiB under a cap stored as a terabyte: the cap is held to 16 GiB, so
    /// the body is refused unread (bad data, 65) and recorded; announcing 15 GiB under a 16 GiB
    /// cap reserves no more than a bound and ends as a truncated body (75). Neither crashes.
    @Test func anAnnouncedLengthIsNeverAllocated() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box, ["--max-bytes", "17179869184"])
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "UPDATE sources SET settings = json_set(settings, '$.\"max-bytes\"', '1000000000000')"])
        try upstream.control(["fault": "announce", "announce": 107_374_182_400])
        let refused = try await box.cache("sync", "bank")
        #expect(refused.status == 65, "\(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("body larger than the 17179869184-byte cap"), "\(refused.stderr)")

        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "UPDATE sources SET settings = json_set(settings, '$.\"max-bytes\"', '17179869184')"])
        try upstream.control(["fault": "announce", "announce": 16_106_127_360])
        // Under a 4 GiB address-space limit, as on a smaller machine: reserving the 15 GiB
        // announced would fail there and crash the sync.
        let cut = try await box.run("/usr/bin/prlimit", ["--as=4294967296", Paths.cacheBinary, "sync", "bank", "--timeout", "10"],
                                    environment: ["CACHE_DB": box.database])
        #expect(cut.status == 75, "\(cut.status): \(cut.stderr)")
        #expect(cut.stderr.contains("truncated body"), "\(cut.stderr)")
        #expect(try runs(box) == ["failed", "failed"])
        // Nothing left half-done: the lease is free and the next sync runs.
        try upstream.control(["reset": true])
        let again = try await box.cache("sync", "bank")
        #expect(again.status == 0, "\(again.stderr)")
    }

    /// A port given as a huge integer is out of range, not a port of 0 or nil.
    @Test func aHugePortIsRefusedWhenTheSourceIsAdded() async throws {
        let box = try Sandbox()
        let added = try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:99999999999999999999/account")
        #expect(added.status == 64, "\(added.stderr)")
        #expect(added.stderr.contains("port"), "\(added.stderr)")
    }

    /// A FIFO, a device and a folder are refused before a byte is read: reading one could wait
    /// forever, past any deadline.
    @Test func aFileSourceReadsRegularFilesOnly() async throws {
        let box = try Sandbox()
        let fifo = box.folder + "/pipe"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (name, path, what) in [("fifo", fifo, "a FIFO"), ("stdin", "/dev/stdin", "character device"),
                                   ("folder", box.folder, "a folder")] {
            #expect(try await box.cache("sources", "add", name, "--kind", "jokes", "--url", "file://" + path).status == 0)
            let started = ContinuousClock.now
            let synced = try await box.cache("sync", name, "--timeout", "20")
            #expect(synced.status == 78, "\(name): \(synced.status) \(synced.stderr)")
            #expect(synced.stderr.contains(what) && synced.stderr.contains("not a regular file"), "\(synced.stderr)")
            #expect(ContinuousClock.now - started < .seconds(10), "\(name) waited")
        }
    }

    /// A json source's next page at `file:///dev/stdin` is refused the same way, not read.
    @Test func aNextPageOnStandardInputIsRefused() async throws {
        let box = try Sandbox()
        let first = box.folder + "/page1.json"
        try Data(#"{"items": [{"id": 1}], "next": "file:///dev/stdin"}"#.utf8).write(to: URL(fileURLWithPath: first))
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", "file://" + first,
                                    "--rows", "$.items", "--key", "id", "--next", "$.next").status == 0)
        let synced = try await box.cache("sync", "items", "--timeout", "20")
        #expect(synced.status == 78, "\(synced.status): \(synced.stderr)")
        #expect(synced.stderr.contains("not a regular file"), "\(synced.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM records").first?["n"] == "0")
    }

    /// A monitor's check never passes on nothing: no database at the path, or no sources in it.
    @Test func theFreshnessCheckFailsWithNoDatabaseOrNoSources() async throws {
        let box = try Sandbox()
        let missing = try await box.cache("status", "--max-age", "1h")
        #expect(missing.status == 66, "\(missing.status): \(missing.stderr)")
        #expect(missing.stderr.contains("no database at \(box.database)"), "\(missing.stderr)")
        #expect(!missing.stdout.contains("ok"))
        #expect(!FileManager.default.fileExists(atPath: box.database), "the check created the database")

        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", "http://127.0.0.1:1/jokes").status == 0)
        #expect(try await box.cache("sources", "remove", "jokes", "--yes").status == 0)
        for json in [false, true] {
            let empty = try await box.cache(["status", "--max-age", "1h"] + (json ? ["--json"] : []))
            #expect(empty.status == 1, "\(empty.status): \(empty.stderr)")
            #expect(empty.stderr.contains("no sources in \(box.database)"), "\(empty.stderr)")
            #expect(!empty.stdout.contains("ok:"))
            if json { #expect(try empty.jsonArray().isEmpty) }
        }
        // Without --max-age an empty cache is not an error: it says so, naming the file.
        let plain = try await box.cache("status")
        #expect(plain.status == 0)
        #expect(plain.stderr.contains("No sources yet in \(box.database)"), "\(plain.stderr)")
    }

    /// `status` says which database it read: on stderr after the table, and in each JSON object.
    @Test func statusNamesTheDatabase() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        let table = try await box.cache("status")
        #expect(table.status == 0)
        #expect(table.stderr.contains("database: \(box.database)"), "\(table.stderr)")
        #expect(!table.stdout.contains(box.database))
        let json = try await box.cache("status", "--json").jsonArray()
        #expect(json.first?["database"] as? String == box.database)
    }

    /// A sync the removal guard holds is `held`, not `failed`, everywhere it is reported, and sets
    /// no backoff: it needs a person, not time.
    @Test func aHeldSyncIsItsOwnOutcome() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        let transactions = (0..<10).map { ["type": 1, "vendor": "Shop \($0)", "amount": $0 + 1, "date": "2026-11-0\(1 + $0 % 9) 10:00:00"] as [String: Any] }
        try upstream.setAccount(["name": "A", "currentBalance": 1, "transactions": transactions])
        #expect(try await box.cache("sync", "bank").status == 0)
        try upstream.setAccount(["name": "A", "currentBalance": 1, "transactions": Array(transactions.prefix(2))])

        let held = try await box.cache("sync", "bank", "--json")
        #expect(held.status == 65, "\(held.stderr)")
        let report = try #require(try held.jsonArray().first)
        #expect(report["outcome"] as? String == "held")
        #expect((report["error"] as? String)?.contains("would remove 8 of 10") == true)
        let human = try await box.cache("sync", "bank")
        #expect(human.stderr.contains("bank: held: would remove 8 of 10"), "\(human.stderr)")
        #expect(!human.stderr.contains("failed"), "\(human.stderr)")

        #expect(try runs(box) == ["updated", "held", "held"])
        let state = try #require(try rows(box.database, "SELECT last_outcome, failures, next_attempt_at FROM sync_state").first)
        #expect(state["last_outcome"] == "held" && state["failures"] == "0" && state["next_attempt_at"] != "NULL", "\(state)")
        let status = try await box.cache("status", "--json").jsonArray()
        #expect(status.first?["last_outcome"] as? String == "held")
        let table = try await box.cache("status")
        #expect(table.stdout.contains("held") && table.stdout.contains("bank: held: would remove 8 of 10"), "\(table.stdout)")
        let history = try await box.cache("history", "bank", "--json").jsonArray()
        #expect(history.compactMap { $0["outcome"] as? String }.filter { $0 == "held" }.count == 2, "\(history)")
        let metrics = try await box.cache("metrics").stdout
        #expect(metrics.contains(#"cache_sync_runs_total{source="bank",outcome="held"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"cache_sync_runs_total{source="bank",outcome="failed"} 0"#))
        #expect(metrics.contains(#"cache_consecutive_failures{source="bank"} 0"#))
        // No growing backoff, and no download every minute: cron asks again once a TTL has
        // passed (and is held again), not before.
        let early = try await box.cache("sync", "--if-stale", "--json")
        let skipped = try #require(try early.jsonArray().first)
        #expect(skipped["outcome"] as? String == "skipped" && (skipped["note"] as? String)?.hasPrefix("held by the removal guard; next try in") == true, "\(skipped)")
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database,
            "UPDATE sync_state SET next_attempt_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 second'), last_success_at = '2026-01-01T00:00:00.000Z'"])
        let cron = try await box.cache("sync", "--if-stale", "--json")
        #expect(try cron.jsonArray().first?["outcome"] as? String == "held", "\(cron.stdout)")
        #expect(try rows(box.database, "SELECT failures FROM sync_state").first?["failures"] == "0")
    }

    /// A `cache list` from a shell without the source's token variable starts no refresh, says
    /// so once, and records nothing: no failed run, no backoff for cron to honour.
    @Test func aReadWithoutTheTokenStartsNoRefresh() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box, ["--token-env", "BANK_TOKEN", "--ttl", "10m"])
        #expect(try await box.cache(["sync", "bank"], environment: ["BANK_TOKEN": "secret"]).status == 0)
        try age(box.database, by: 3600)  // past the TTL: a read would refresh
        let requests = try upstreamRequests(upstream).count
        for arguments in [["list", "bank"], ["list", "bank", "--wait"], ["list", "bank", "--json"]] {
            let read = try await box.cache(arguments)
            #expect(read.status == 0, "\(arguments): \(read.stderr)")
            let lines = read.stderr.split(separator: "\n").filter { $0.contains("not refreshing") }
            #expect(lines.count == 1 && lines[0].contains("the token variable BANK_TOKEN is not set"), "\(read.stderr)")
        }
        // A refresh a read starts is a process it spawns before it exits: had one started, it
        // would be running now (its environment names the database) or have asked upstream.
        #expect(processesMentioning(box.database).isEmpty, "a refresh is running")
        #expect(try upstreamRequests(upstream).count == requests)
        #expect(try runs(box) == ["updated"])
        let state = try #require(try rows(box.database, "SELECT failures, next_attempt_at FROM sync_state").first)
        #expect(state["failures"] == "0" && state["next_attempt_at"] == "NULL", "\(state)")
        // With the token, the read refreshes as ever.
        #expect(try await box.cache(["list", "bank", "--wait"], environment: ["BANK_TOKEN": "secret"]).status == 0)
        #expect(try runs(box) == ["updated", "unchanged"])
    }

    /// `metrics --textfile` is readable by node_exporter, which runs as another user, under the
    /// system units' `UMask=0077` too: the file is 0644 whatever the umask (issue 54).
    @Test func theTextfileIsReadableByOthersWhateverTheUmask() async throws {
        let box = try Sandbox()
        let file = try box.syncedFileSource("items", #"[{"id": 1}]"#)
        _ = file
        let prom = box.folder + "/cache.prom"
        for umask in ["077", "027", "022"] {
            let written = try await box.run("/bin/sh", ["-c", "umask \(umask); exec '\(Paths.cacheBinary)' --db '\(box.database)' metrics --textfile '\(prom)'"])
            #expect(written.status == 0, "\(written.stderr)")
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: prom)[.posixPermissions] as? Int)
            #expect(mode == 0o644, "umask \(umask): mode \(String(mode, radix: 8))")
        }
    }

    /// `metrics --textfile` replaces a regular file only, follows a symlink, and on failure
    /// leaves no temporary file and says why in one line.
    @Test func theMetricsTextfileReplacesOnlyARegularFile() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        func leftovers() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: box.folder).filter { $0.hasSuffix(".tmp") }
        }
        let fifo = box.folder + "/metrics.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for target in [fifo, box.folder, "/dev/null"] {
            let refused = try await box.cache("metrics", "--textfile", target)
            #expect(refused.status == 73, "\(target): \(refused.stderr)")
            #expect(refused.stderr.contains("cannot write \(target): it exists and is not a regular file"), "\(refused.stderr)")
        }
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced")

        let missing = try await box.cache("metrics", "--textfile", box.folder + "/no/such/folder/cache.prom")
        #expect(missing.status == 73)
        #expect(missing.stderr.contains("cannot write \(box.folder)/no/such/folder/cache.prom: its folder does not exist"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("database"))

        // A symlink: the file it points to is replaced, the link stays.
        let real = box.folder + "/real.prom", link = box.folder + "/link.prom"
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: real))
        #expect(symlink(real, link) == 0)
        #expect(try await box.cache("metrics", "--textfile", link).status == 0)
        #expect(try String(contentsOfFile: real, encoding: .utf8).contains("cache_sync_runs_total"))
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)

        // A write that fails part way (a file-size limit standing in for a full disk): one line,
        // the old file kept, no temporary file left.
        let full = try await box.run("/usr/bin/prlimit", ["--fsize=64", Paths.cacheBinary, "metrics", "--textfile", real],
                                     environment: ["CACHE_DB": box.database])
        #expect(full.status == 73, "\(full.status): \(full.stderr)")
        #expect(full.stderr == "cache: cannot write \(real): File too large; nothing was written\n", "\(full.stderr)")
        #expect(try String(contentsOfFile: real, encoding: .utf8).contains("cache_sync_runs_total"))
        let left = try leftovers()
        #expect(left.isEmpty, "\(left)")
    }

    /// Sources removed while `cache sync` runs them are reported as skipped, never as a
    /// database error (once: `FOREIGN KEY constraint failed`, exit 74, in 6 of 20 runs; with the
    /// fix taken out, this test saw it in 3 of 20).
    @Test func aSourceRemovedDuringSyncIsSkipped() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        var outcomes: [String: Int] = [:]
        for round in 0..<12 {
            for name in ["a", "b", "c"] {
                #expect(try await box.cache("sources", "add", name, "--kind", "account", "--url", upstream.baseURL + "/account").status == 0)
            }
            let sync = try box.start(["sync", "--json"])
            try await pause(Double(round % 6) * 0.008)
            #expect(try await box.cache("sources", "remove", "b", "--yes").status == 0)
            let (result, _) = await sync.finished()
            #expect(result.status == 0, "round \(round): \(result.status) \(result.stderr)")
            let b = try result.jsonArray().first { $0["source"] as? String == "b" }
            // Removed before the sync listed its sources, it is not in the report at all.
            let outcome = b?["outcome"] as? String ?? "not listed"
            outcomes[outcome, default: 0] += 1
            #expect(["updated", "skipped", "not listed"].contains(outcome), "round \(round): \(result.stdout)")
            if outcome == "skipped" { #expect((b?["note"] as? String)?.contains("removed during the sync") == true) }
            for name in ["a", "c"] { #expect(try await box.cache("sources", "remove", name, "--yes").status == 0) }
        }
        let check = try await box.run("/usr/bin/env", ["sqlite3", box.database, "PRAGMA foreign_key_check; PRAGMA integrity_check"])
        #expect(check.stdout == "ok\n", "\(check.stdout)")
        print("sources removed during a sync: \(outcomes)")
    }

    /// `sources set --max-delete` while a sync runs: the sync writes nothing (75), as for a new
    /// URL or key, and the next one runs under the new limit.
    @Test func aNewRemovalLimitStopsASyncInFlight() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box, ["--max-delete", "100%"])
        let transactions = (0..<10).map { ["type": 1, "vendor": "Shop \($0)", "amount": $0 + 1, "date": "2026-11-0\(1 + $0 % 9) 10:00:00"] as [String: Any] }
        try upstream.setAccount(["name": "A", "currentBalance": 1, "transactions": transactions])
        #expect(try await box.cache("sync", "bank").status == 0)
        try upstream.setAccount(["name": "A", "currentBalance": 1, "transactions": Array(transactions.prefix(2))])
        try upstream.control(["delay": 1.5])
        let sync = try box.start(["sync", "bank"])
        // In flight once it holds the source's lease (its fetch then waits 1.5 s on upstream).
        let started = ContinuousClock.now
        while try rows(box.database, "SELECT count(*) AS n FROM sync_leases WHERE source = 'bank'").first?["n"] != "1",
              ContinuousClock.now - started < .seconds(10) {
            try await pause(0.02)
        }
        #expect(try await box.cache("sources", "set", "bank", "--max-delete", "2").status == 0)
        let (inFlight, _) = await sync.finished()
        #expect(inFlight.status == 75, "\(inFlight.status): \(inFlight.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "10")
        try upstream.control(["delay": 0])
        let next = try await box.cache("sync", "bank")
        #expect(next.status == 65 && next.stderr.contains("would remove 8 of 10"), "\(next.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM transactions").first?["n"] == "10")
    }

    /// A validator holding a CR (or another control) is not kept, and none is sent back: the
    /// server's text must not become a header of ours.
    @Test func validatorsWithControlsAreDropped() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        try upstream.control(["validators": "\"abc\rInjected: yes\""])
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try rows(box.database, "SELECT etag FROM sync_state").first?["etag"] == "NULL")
        #expect(try await box.cache("sync", "bank").status == 0)
        var last = try #require(try upstreamRequests(upstream).last?["headers"] as? [String: String])
        #expect(last["if-none-match"] == nil && last["injected"] == nil, "\(last)")

        // One stored before this check is not sent either.
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "UPDATE sync_state SET etag = '\"x\"' || char(13) || 'Injected: yes'"])
        #expect(try await box.cache("sync", "bank").status == 0)
        last = try #require(try upstreamRequests(upstream).last?["headers"] as? [String: String])
        #expect(last["if-none-match"] == nil && last["injected"] == nil, "\(last)")
        // A clean validator still works: sent back, and answered 304.
        try upstream.control(["validators": true])
        #expect(try await box.cache("sync", "bank").status == 0)
        let confirmed = try await box.cache("sync", "bank", "--json").jsonArray()
        #expect(confirmed.first?["not_modified"] as? Bool == true, "\(confirmed)")
    }

    /// `check` and `sql` refuse another program's SQLite file (78) and a file that is not
    /// SQLite, as every other command does, and write nothing to it.
    @Test func readCommandsRefuseForeignFiles() async throws {
        let box = try Sandbox()
        let foreign = box.folder + "/other.sqlite3", text = box.folder + "/notes.txt"
        _ = try await box.run("/usr/bin/env", ["sqlite3", foreign, "CREATE TABLE t (x); INSERT INTO t VALUES (1)"])
        try Data("just some text, long enough to be read as a database header\n".utf8).write(to: URL(fileURLWithPath: text))
        for path in [foreign, text] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for command in [["check"], ["sql", "SELECT 1"]] {
                let result = try await box.run(Paths.cacheBinary, command + ["--db", path])
                #expect(result.status == 78, "\(command) \(path): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("is not a cache database"), "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    /// `cache sql` runs SQLite's read-only table-valued functions, which json sources need, and
    /// still refuses every write, sqlite_master's included.
    @Test func sqlRunsJSONTableFunctionsAndStillRefusesWrites() async throws {
        let box = try Sandbox()
        let file = box.folder + "/items.json"
        try Data(#"[{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": ["c"]}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", "file://" + file, "--key", "id").status == 0)
        #expect(try await box.cache("sync", "items").status == 0)
        let tags = try await box.cache("sql", "SELECT r.key, t.value FROM records r, json_each(r.record, '$.tags') t ORDER BY 1, 2", "--csv")
        #expect(tags.status == 0, "\(tags.stderr)")
        #expect(tags.stdout == "key,value\n1,a\n1,b\n2,c\n", "\(tags.stdout)")
        let tree = try await box.cache("sql", "SELECT count(*) AS n FROM records, json_tree(records.record)", "--json")
        #expect(tree.status == 0, "\(tree.stderr)")
        let before = try cacheDump(box.database)
        for write in ["UPDATE sqlite_master SET sql = '' WHERE name = 'records'", "PRAGMA writable_schema = 1",
                      "DELETE FROM records", "CREATE VIRTUAL TABLE v USING json_each('[1]')",
                      "INSERT INTO records SELECT 'items', value, value, '' FROM json_each('[3]')"] {
            let refused = try await box.cache("sql", write)
            #expect(refused.status == 64, "\(write): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains("refused"), "\(write): \(refused.stderr)")
        }
        #expect(try cacheDump(box.database) == before)
    }

    /// `--accept-removals` disarms the guard for the sources named, never for every source.
    @Test func acceptingRemovalsNeedsNames() async throws {
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:1/account").status == 0)
        let refused = try await box.cache("sync", "--accept-removals")
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("'--accept-removals' needs the names of the sources"), "\(refused.stderr)")
        #expect(try runs(box).isEmpty)
    }

    /// A 403 rate limit that says when to come back only with Retry-After is honoured up to the
    /// backoff's cap (1 h), as the README says; an X-RateLimit-Reset up to a day.
    @Test func aRateLimitsRetryAfterIsCappedAtAnHour() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id").status == 0)
        try upstream.rateLimit(status: 403, retryAfter: 72_000)
        let limited = try await box.cache("sync", "items")
        #expect(limited.status == 75, "\(limited.stderr)")
        func wait() throws -> Double {
            let next = try #require(try rows(box.database, "SELECT (julianday(next_attempt_at) - julianday('now')) * 86400 AS s FROM sync_state").first?["s"])
            return try #require(Double(next))
        }
        let capped = try wait()
        #expect(capped > 3000 && capped <= 3600, "\(capped)")
        try upstream.rateLimit(status: 403, resetIn: 72_000)
        #expect(try await box.cache("sync", "items").status == 75)
        let reset = try wait()
        #expect(reset > 71_000 && reset <= 72_000, "\(reset)")
    }

    /// An upstream that does not speak valid HTTP is bad data from upstream (65), said once, not
    /// a scheme refused (78) or an outage retried three times (69).
    @Test(arguments: [("no-status-line", "is not HTTP (no status line)"), ("status-text", "is not HTTP (no status line)"),
                      ("negative-length", "is not valid HTTP"), ("long-header", "a response header from")])
    func aBrokenUpstreamIsBadData(_ route: String, _ message: String) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "broken", "--kind", "jokes", "--url", upstream.baseURL + "/broken/" + route).status == 0)
        let synced = try await box.cache("sync", "broken", "--json")
        #expect(synced.status == 65, "\(route): \(synced.status) \(synced.stderr)")
        #expect(synced.stderr.contains(message), "\(synced.stderr)")
        #expect(try synced.jsonArray().first?["attempts"] as? Int == 1)
    }

    /// A proxy from the environment that cannot be reached is named as the proxy, with the
    /// variable it came from and without its credentials.
    @Test func anUnreachableProxyIsNamed() async throws {
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", "http://upstream.invalid/jokes").status == 0)
        let synced = try await box.cache(["sync", "jokes", "--timeout", "5"], environment: ["http_proxy": "http://user:secret@127.0.0.1:9"])
        #expect(synced.status == 69, "\(synced.stderr)")
        #expect(synced.stderr.contains("cannot reach http://upstream.invalid/jokes through the proxy http://127.0.0.1:9 (from http_proxy): connection refused"),
                "\(synced.stderr)")
        #expect(!synced.stderr.contains("secret"))
        // no_proxy takes the host out of the proxy's hands, and the message says nothing of one.
        let direct = try await box.cache(["sync", "jokes", "--timeout", "5"],
                                         environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": ".invalid"])
        #expect(!direct.stderr.contains("proxy"), "\(direct.stderr)")
    }

    /// `--limit 0` is refused: it printed nothing and then "No sync runs yet".
    @Test func aLimitOfZeroIsAUsageError() async throws {
        let box = try Sandbox()
        for arguments in [["history", "--limit", "0"], ["list", "x", "--limit", "0"]] {
            let result = try await box.cache(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("expected a whole number, 1 or more"), "\(result.stderr)")
        }
    }

    /// A json source's table cuts a long value at 30 columns on a terminal only: into a pipe
    /// every value is written whole.
    @Test func theRecordTableWritesWholeValuesIntoAPipe() async throws {
        let box = try Sandbox()
        let file = box.folder + "/items.json"
        let long = String(repeating: "abcdefghij", count: 8)
        try Data(#"[{"id": 1, "text": "\#(long)"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sources", "add", "items", "--kind", "json", "--url", "file://" + file, "--key", "id").status == 0)
        #expect(try await box.cache("sync", "items").status == 0)
        let piped = try await box.cache("list", "items", "--offline")
        #expect(piped.stdout.contains(long), "\(piped.stdout)")
        let screen = try await box.terminal(["list", "items", "--offline"], columns: 120)
        #expect(!screen.stdout.contains(long) && screen.stdout.contains("…"), "\(screen.stdout)")
    }

    /// Headers stored by an older cache that fail today's check are not sent, and `sources
    /// list` says so, by name (a value may be a secret), instead of dropping them silently.
    @Test func storedHeadersThatFailTheCheckAreNamed() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box, ["--header", "X-Good: yes"])
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database,
            "UPDATE sources SET settings = json_set(settings, '$.header', json_array('X-Good: yes', 'X-Bad: a' || char(13) || 'Injected: 1'))"])
        let listed = try await box.cache("sources", "list")
        #expect(listed.status == 0)
        #expect(listed.stderr.contains("bank: stored header 'X-Bad' is not valid (a control character?) and not sent"), "\(listed.stderr)")
        let json = try await box.cache("sources", "list", "--json").jsonArray()
        #expect(json.first?["unsent_headers"] as? [String] == ["X-Bad"])
        #expect(json.first?["headers"] as? [String] == ["X-Good"])
        #expect(try await box.cache("sync", "bank").status == 0)
        let sent = try #require(try upstreamRequests(upstream).last?["headers"] as? [String: String])
        #expect(sent["x-good"] == "yes" && sent["x-bad"] == nil && sent["injected"] == nil, "\(sent)")
    }

    /// A connection reset in the TLS handshake is the network's trouble: asked again, and 69,
    /// like any connection that broke before an answer.
    @Test func aResetInTheTLSHandshakeIsRetried() async throws {
        let listener = try ResettingListener()
        let box = try Sandbox()
        #expect(try await box.cache("sources", "add", "t", "--kind", "jokes", "--url", "https://127.0.0.1:\(listener.port)/").status == 0)
        let synced = try await box.cache("sync", "t", "--json")
        #expect(synced.status == 69, "\(synced.stderr)")
        let report = try #require(try synced.jsonArray().first)
        #expect(report["attempts"] as? Int == 3, "\(report)")
        #expect((report["error"] as? String)?.contains("the connection was reset before an answer") == true, "\(report)")
    }

    /// At 80 columns `status` keeps NEXT TRY and the URL, and `history` the error: what gives
    /// way is cut with … or moved to a line of its own, and no line is wider than the screen.
    @Test func at80ColumnsStatusAndHistoryKeepWhatMatters() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        #expect(try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", "http://127.0.0.1:9/jokes/ten?per_page=100&page=1").status == 0)
        _ = try await box.cache("sync")
        let status = try await box.terminal(["status"], columns: 80)
        #expect(try #require(status.widestLine) <= 80, "\(status.stdout)")
        #expect(status.stdout.contains("NEXT TRY") && status.stdout.contains("http://127.0.0.1:9/jokes/ten"), "\(status.stdout)")
        #expect(status.stdout.contains("jokes: last error: cannot reach"), "\(status.stdout)")
        let history = try await box.terminal(["history"], columns: 80)
        #expect(try #require(history.widestLine) <= 80, "\(history.stdout)")
        #expect(history.stdout.contains("cannot reach http://127.0.0.1:9/jokes/ten"), "\(history.stdout)")
        // Wide enough, one line each, as before.
        let wide = try await box.terminal(["status"], columns: 200)
        #expect(wide.stdout.contains("KIND") && wide.stdout.split(separator: "\n").contains { $0.contains("bank") && $0.contains("/account") })
    }

    /// `check` and `sql` as another user, who may read the cache but not write beside it (no
    /// `-shm` can be made): what can be read is checked, exit 0, not 74.
    @Test(.enabled(if: nobodyRunsTheBinary, "the nobody user cannot run the cache binary here"))
    func anotherUserChecksWhatItCanRead() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        #expect(try await box.cache("sync", "bank").status == 0)
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "PRAGMA wal_checkpoint(TRUNCATE)"])
        chmod(box.folder, 0o755)
        chmod(box.database, 0o644)
        let binary = box.folder + "/cache"
        try FileManager.default.copyItem(atPath: Paths.cacheBinary, toPath: binary)
        chmod(binary, 0o755)
        func asNobody(_ arguments: [String]) async throws -> RunResult {
            try await box.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                              environment: ["CACHE_DB": box.database])
        }
        let check = try await asNobody(["check"])
        #expect(check.status == 0, "\(check.status): \(check.stdout) \(check.stderr)")
        #expect(check.stdout.hasPrefix("integrity: ok\nforeign keys: ok\n"), "\(check.stdout)")
        let sql = try await asNobody(["sql", "SELECT count(*) AS n FROM transactions", "--csv"])
        #expect(sql.status == 0 && sql.stdout == "n\n6\n", "\(sql.stdout) \(sql.stderr)")
    }

    /// One very wide record costs the table a bounded amount to list: its fields are read in one
    /// pass, not one parse of the whole record per column (200 columns of an 18 MB record took
    /// 3.4 GB). Memory stays under 10 times the record plus a constant.
    @Test func aVeryWideRecordListsInBoundedMemory() async throws {
        let box = try Sandbox()
        let file = box.folder + "/wide.json"
        var text = #"[{"id": 1"#
        for field in 0..<200_000 { text += #", "f\#(field)": \#(field)"# }
        text += "}]"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await box.cache("sources", "add", "wide", "--kind", "json", "--url", "file://" + file, "--key", "id").status == 0)
        #expect(try await box.cache("sync", "wide").status == 0)
        let (listed, peakKB) = try await offThePool { [box = UncheckedSendable(box)] in try measuredPeak(box.value, ["list", "wide", "--offline"]) }
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.hasPrefix("  KEY  f0  f1  f2  f3"), "\(listed.stdout.prefix(200))")
        #expect(listed.stdout.split(separator: "\n").last?.hasPrefix("  1    0   1   2   3") == true, "\(listed.stdout.suffix(300))")
        let recordKB = text.utf8.count / 1024
        #expect(peakKB > 0 && peakKB < 10 * recordKB + 40 * 1024, "peak \(peakKB) KiB for a \(recordKB) KiB record")
        print("a \(recordKB) KiB record of 200,000 fields: list peaks at \(peakKB) KiB")
    }

    /// `cache_sync_runs_total` is a counter: pruning the history (which the installed timers do
    /// daily) never lowers it.
    @Test func theRunsCounterSurvivesAPrune() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await bank(upstream, box)
        for _ in 0..<3 { #expect(try await box.cache("sync", "bank").status == 0) }
        try upstream.control(["status": 503])
        #expect(try await box.cache("sync", "bank", "--timeout", "2").status != 0)
        func counters() async throws -> [String] {
            try await box.cache("metrics").stdout.split(separator: "\n")
                .filter { $0.hasPrefix(#"cache_sync_runs_total{source="bank""#) && !$0.hasSuffix(" 0") }.map(String.init)
        }
        let expected = [#"cache_sync_runs_total{source="bank",outcome="updated"} 1"#, #"cache_sync_runs_total{source="bank",outcome="unchanged"} 2"#,
                        #"cache_sync_runs_total{source="bank",outcome="failed"} 1"#]
        #expect(try await counters() == expected)
        _ = try await box.run("/usr/bin/env", ["sqlite3", box.database, "UPDATE sync_runs SET finished_at = '2026-01-01T00:00:00.000Z'"])
        #expect(try await box.cache("prune", "--keep", "1d").status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "0")
        #expect(try await counters() == expected)
        // A removed source takes its counts along.
        #expect(try await box.cache("sources", "remove", "bank", "--yes").status == 0)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM run_totals").first?["n"] == "0")
    }
}

/// A TCP listener that reads the first bytes of each connection (a TLS ClientHello) and resets it.
final class ResettingListener: @unchecked Sendable {
    let port: Int
    private let socketFD: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw TestFailure("cannot listen") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        socketFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 16)
                _ = read(connection, &buffer, buffer.count)
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(connection)
            }
        }
    }

    deinit { shutdown(socketFD, Int32(SHUT_RDWR)); close(socketFD) }
}
