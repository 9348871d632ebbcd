import Foundation
import Testing

/// Read-only mode, for a replica's readers: reads serve what is there and start nothing,
/// commands that write refuse, and no file is created or changed.
@Suite(.gated) struct ReadOnlyTests {
    /// The bytes of the database file and which of its side files exist.
    func files(_ box: Sandbox) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: box.database))
        var hasher = Hasher()
        hasher.combine(data)
        let sides = ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: box.database + $0) }
        return "\(data.count) bytes, hash \(hasher.finalize()), side files \(sides)"
    }

    func staleBank(_ upstream: LoopbackUpstream, _ box: Sandbox) throws {
        #expect(box.cacheInProcess(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "10m"]).status == 0)
        #expect(box.cacheInProcess(["sync"]).status == 0)
        try age(box.database, by: 3600)
    }

    @Test func readsServeWhatIsThereAndChangeNothing() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try staleBank(upstream, box)
        let before = try files(box)
        let requests = try upstreamRequests(upstream).count
        for environment in [["CACHE_READ_ONLY": "1"], [:]] {
            let flag = environment.isEmpty ? ["--read-only"] : []
            // Through the binary: the refresh a read would start is another process.
            let list = try await box.cache(flag + ["list", "bank", "--json"], environment: environment)
            #expect(list.status == 0 && list.stderr.isEmpty, "\(list.stderr)")
            #expect(try list.jsonArray().count == 6 && list.jsonArray().allSatisfy { $0["stale"] as? Bool == true })
            // --wait has nothing to wait for: no refresh is started.
            #expect(try await box.cache(flag + ["list", "bank", "--wait"], environment: environment).status == 0)
            let status = box.cacheInProcess(flag + ["status"], environment: environment)
            #expect(status.stderr.contains("read-only: the newest sync here ended 1h ago"), "\(status.stderr)")
            #expect(try box.cacheInProcess(flag + ["status", "--json"], environment: environment).jsonArray().first?["read_only"] as? Bool == true)
            #expect(box.cacheInProcess(flag + ["status", "--max-age", "30m"], environment: environment).status == 1)
            #expect(box.cacheInProcess(flag + ["status", "--max-age", "2h"], environment: environment).status == 0)
            for command in [["check"], ["sql", "SELECT count(*) FROM transactions"], ["export", "bank"], ["history"], ["metrics"], ["sources", "list"]] {
                let result = box.cacheInProcess(flag + command, environment: environment)
                #expect(result.status == 0, "\(command): \(result.stderr)")
            }
        }
        #expect(try files(box) == before)
        #expect(try upstreamRequests(upstream).count == requests)
        #expect(processesMentioning(box.database).isEmpty)  // no background refresh either
    }

    @Test(arguments: [["sync"], ["sync", "bank", "--full"], ["sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/"],
                      ["sources", "set", "bank", "--ttl", "1h"], ["sources", "remove", "bank", "--yes"], ["prune", "--keep", "1d"]])
    func commandsThatWriteRefuseAndChangeNothing(_ command: [String]) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try staleBank(upstream, box)
        let before = try files(box)
        let result = box.cacheInProcess(["--read-only"] + command)
        #expect(result.status == 78, "\(command): \(result.stderr)")
        #expect(result.stderr == "cache: the cache at \(box.database) is read-only here: --read-only or CACHE_READ_ONLY=1 is set, and this command writes; run it where the cache is written (the primary)\n")
        #expect(try files(box) == before)
    }

    /// No database at the path: read-only mode makes none.
    @Test func aMissingCacheIsNotCreated() throws {
        let box = try Sandbox()
        #expect(box.cacheInProcess(["--read-only", "list", "bank"]).status == 66)
        #expect(box.cacheInProcess(["--read-only", "sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/"]).status == 78)
        #expect(!FileManager.default.fileExists(atPath: box.database))
    }

    /// A file Litestream opened first holds its `_litestream_seq` and `_litestream_lock`: it is
    /// still an empty file to a cache, which adopts it and leaves those tables alone.
    @Test func aFileLitestreamTouchedFirstIsAdopted() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let made = try await box.run("/usr/bin/env", ["sqlite3", box.database, "PRAGMA journal_mode=WAL; CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER); CREATE TABLE _litestream_lock (id INTEGER);"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(box.cacheInProcess(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"]).status == 0)
        #expect(box.cacheInProcess(["sync"]).status == 0)
        #expect(box.cacheInProcess(["check"]).status == 0)
        let tables = try rows(box.database, "SELECT name FROM sqlite_schema WHERE name LIKE '\\_litestream%' ESCAPE '\\' ORDER BY name").compactMap { $0["name"] }
        #expect(tables == ["_litestream_lock", "_litestream_seq"])
    }

    /// Any value of CACHE_READ_ONLY but empty, 0, false and no means read-only; completion reads
    /// source names read-only.
    @Test func theEnvironmentErrsOnTheSideOfWritingNothing() throws {
        let box = try Sandbox()
        for (value, refused) in [("on", true), ("TRUE ", true), ("1", true), ("0", false), ("no", false), ("", false)] {
            let add = box.cacheInProcess(["sources", "add", "x\(refused)\(value.count)", "--kind", "jokes", "--url", "http://127.0.0.1:9/"],
                                         environment: ["CACHE_READ_ONLY": value])
            #expect((add.status == 78) == refused, "CACHE_READ_ONLY=\(value.debugDescription): \(add.status) \(add.stderr)")
        }
        #expect(box.cacheInProcess(["completion", "bash"]).stdout.contains("--read-only sources list --json"))
    }

    /// `serve --read-only` beside the cron syncs that write the file, which is a WAL file with
    /// neither side file between two syncs (read as a snapshot, under SQLite's shared lock): the
    /// server keeps no snapshot open between requests, so a writer that locks the file as
    /// Litestream's follower does gets the lock, and the server sees each sync, in its rows and as
    /// an event. (Kept in its pool and its event watcher, a snapshot never saw a later sync.)
    @Test func aServerBesideCronSyncsLetsThemWriteAndSeesThem() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try staleBank(upstream, box)
        #expect(!FileManager.default.fileExists(atPath: box.database + "-wal") && !FileManager.default.fileExists(atPath: box.database + "-shm"))
        let server = try ServeProcess(box, ["--read-only"])
        #expect(try server.get("/sources/bank/rows?limit=2").json()["stale"] as? Bool == true)
        #expect(try server.get("/sources").status == 200)
        // Between requests the server holds no lock on the snapshot: a writer that locks the file
        // as Litestream's follower does (the pending byte, then the shared range) gets it.
        let script = """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR)
            deadline = time.monotonic() + 5
            while True:
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0x40000000)
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)
                    print("locked")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        print("still locked after 5 s")
                        break
                    time.sleep(0.05)
            """
        let locker = try await box.run(Paths.python, ["-c", script, box.database])
        #expect(locker.stdout == "locked\n", "\(locker.stdout) \(locker.stderr)")
        #expect(try server.get("/sources/bank/rows?limit=2").status == 200)
        let events = try EventsClient(server)
        #expect(events.read(until: ": cache events"))
        for round in 1...2 {
            let sync = try await box.cache("sync", "bank", "--full")
            #expect(sync.status == 0, "round \(round): \(sync.status) \(sync.stderr)")
            #expect(events.read(until: "\"source\": \"bank\", \"run\": \(round + 1)", seconds: 10), "round \(round): \(events.text)")
            #expect(try server.get("/sources/bank/rows?limit=2").json()["stale"] as? Bool == false)
            try age(box.database, by: 3600)
        }
    }

    /// A plain read leaves an empty -wal beside its -shm (a read-only connection cannot delete
    /// them): that pair is a healthy file, read with SQLite's ordinary locks, not refused as
    /// damaged; and an empty -wal alone holds nothing to recover.
    @Test func anEmptyWALLeftByAnOrdinaryReadIsReadReadOnly() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try staleBank(upstream, box)
        #expect(try await box.cache("list", "bank", "--offline").status == 0)
        var wal = stat()
        #expect(stat(box.database + "-wal", &wal) == 0 && wal.st_size == 0, "a plain read left no empty -wal")
        #expect(FileManager.default.fileExists(atPath: box.database + "-shm"))
        let before = try files(box)
        for (flag, environment) in [(["--read-only"], [String: String]()), ([], ["CACHE_READ_ONLY": "1"])] {
            for command in [["list", "bank", "--json"], ["status"], ["check"], ["sql", "SELECT count(*) FROM transactions"], ["sources", "list"]] {
                let result = try await box.cache(flag + command, environment: environment)
                #expect(result.status == 0, "\(flag) \(command): \(result.status) \(result.stderr)")
            }
        }
        #expect(try files(box) == before)
        // The -shm gone and the empty -wal left: read as a file with neither, creating nothing.
        try FileManager.default.removeItem(atPath: box.database + "-shm")
        let alone = try await box.cache("--read-only", "list", "bank", "--json")
        #expect(try alone.status == 0 && alone.jsonArray().count == 6, "\(alone.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.database + "-shm"))
    }

    /// A damaged page is what a replica's reader meets when its file was written behind the
    /// follower or a restore is still writing it: the error says so, and how to restore again.
    @Test func aMalformedPageSaysWhatAReplicaCanDoAboutIt() async throws {
        let box = try Sandbox()
        try Data(#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p"}]"#.utf8).write(to: URL(fileURLWithPath: box.folder + "/jokes.json"))
        #expect(box.cacheInProcess(["sources", "add", "jokes", "--kind", "jokes", "--url", "file://" + box.folder + "/jokes.json"]).status == 0)
        #expect(box.cacheInProcess(["sync"]).status == 0)
        // Every page past the first few overwritten: the schema reads, the tables do not.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: box.database))
        let size = try handle.seekToEnd()
        let page: UInt64 = 16384
        try handle.seek(toOffset: page * 2)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: Int(size - page * 2)))
        try handle.close()
        for flag in [[], ["--read-only"]] {
            let read = box.cacheInProcess(flag + ["list", "jokes", "--offline"])
            #expect(read.status == 74, "\(flag): \(read.status) \(read.stderr)")
            #expect(read.stderr.contains("malformed") && read.stderr.contains("If \(box.database) is a Litestream replica")
                    && read.stderr.contains("litestream restore -o \(box.database) REPLICA"), "\(flag): \(read.stderr)")
        }
    }

    /// A WAL file with its -wal but no -shm holds commits only a writer can recover: refused,
    /// not read without them.
    @Test func aWALWithoutItsIndexIsRefused() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try staleBank(upstream, box)
        let copy = box.folder + "/copy.sqlite3"
        // A writer keeps the file open (its -wal and -shm there) while the file and -wal are copied.
        let made = try await box.run("/usr/bin/env", ["sqlite3", box.database, "PRAGMA wal_autocheckpoint=0; UPDATE sources SET ttl_s = 7200;",
                                                       ".shell cp '\(box.database)' '\(copy)'", ".shell cp '\(box.database)-wal' '\(copy)-wal'"])
        #expect(made.status == 0 && FileManager.default.fileExists(atPath: copy + "-wal"), "\(made.stderr)")
        let read = box.cacheInProcess(["--db", copy, "--read-only", "list", "bank"])
        #expect(read.status == 74 && read.stderr.contains("has its -wal file but not its -shm"), "\(read.status) \(read.stderr)")
        #expect(!FileManager.default.fileExists(atPath: copy + "-shm"))
    }
}
