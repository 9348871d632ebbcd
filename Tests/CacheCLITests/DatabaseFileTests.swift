import Foundation
import OfflineCache
import Testing

/// The database file itself: where it is made, with which mode, from which schema.
@Suite(.gated) struct DatabaseFileTests {
    @Test func theDatabaseAndItsFolderAreCreatedPrivate() async throws {
        let box = try Sandbox()
        let path = box.folder + "/nested/deeper/cache.sqlite3"
        let result = try await box.cache("--db", path, "sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        #expect(result.status == 0, "\(result.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: box.folder + "/nested/deeper")
        #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(try rows(path, "PRAGMA journal_mode").first?["journal_mode"] == "wal")
    }

    /// A FIFO or a folder at `--db` is no cache: every command says so in one line and exits 78,
    /// read-only or not, and none waits on the FIFO for a writer (each runs under a 10 s limit).
    @Test func aFIFOOrAFolderAtTheDatabasePathIsRefusedAtOnce() async throws {
        let box = try Sandbox()
        let fifo = box.folder + "/fifo", folder = box.folder + "/folder"
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let commands = [["list", "bank"], ["status"], ["status", "--max-age", "1h"], ["sources", "list"], ["sql", "SELECT 1"], ["check"],
                        ["sync"], ["metrics"], ["history"], ["search", "bank", "x"], ["sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/"]]
        // Four at a time: 44 runs, each a process start.
        let runs = [fifo, folder].flatMap { path in commands.flatMap { command in [[], ["--read-only"]].map { (path, command, $0) } } }
        let shared = UncheckedSendable(box)
        let results = try await withThrowingTaskGroup(of: (Int, RunResult).self) { group in
            var results: [Int: RunResult] = [:]
            for (index, run) in runs.enumerated() {
                if index >= 4, let done = try await group.next() { results[done.0] = done.1 }
                group.addTask { (index, try await shared.value.run("/usr/bin/timeout", ["10", Paths.cacheBinary] + run.2 + ["--db", run.0] + run.1)) }
            }
            for try await done in group { results[done.0] = done.1 }
            return results
        }
        for (index, (path, command, flags)) in runs.enumerated() {
            let result = try #require(results[index])
            #expect(result.status == 78, "\(path) \(flags) \(command): \(result.status) \(result.stderr)")
            // (A command that writes is refused in read-only mode before the file is looked at.)
            let writes = ["sync", "sources"].contains(command[0]) && command[1...].first != "list"
            let said = writes && !flags.isEmpty ? "is read-only here" : "\(path) is not a cache database (it is a "
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(said),
                    "\(path) \(flags) \(command): \(result.stderr)")
        }
    }

    @Test func anUncreatableDatabaseExits73() async throws {
        let box = try Sandbox()
        let blocker = box.folder + "/file"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data()))
        let result = try await box.cache("--db", blocker + "/sub/cache.sqlite3", "sources", "add", "x", "--kind", "jokes", "--url", "http://h/")
        #expect(result.status == 73)
        #expect(result.stderr.contains("cannot create the database"))
    }

    @Test func theBinaryCarriesItsMigrations() async throws {
        let box = try Sandbox()
        // The binary alone, in a folder with nothing else of the project.
        let lonely = box.folder + "/bin/cache"
        try FileManager.default.createDirectory(atPath: box.folder + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.cacheBinary, toPath: lonely)
        let path = box.folder + "/elsewhere.sqlite3"
        // A child another test forks while the copy is open for writing holds that descriptor
        // until it execs: starting the copy meanwhile fails with "Text file busy". Asked again.
        var started: RunResult?
        for _ in 0..<50 where started == nil {
            do {
                started = try await box.run(lonely, ["--db", path, "sources", "add", "x", "--kind", "jokes", "--url", "http://h/"])
            } catch let error as NSError where (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
                try await pause(0.1)
            }
        }
        let result = try #require(started, "the copied binary stayed busy")
        #expect(result.status == 0, "\(result.stderr)")
        let tables = try rows(path, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name").map { $0["name"]! }
        for name in ["sources", "sync_state", "sync_runs", "accounts", "transactions", "jokes",
                     "cached_accounts", "cached_transactions", "cached_jokes", "schema_migrations"] {
            #expect(tables.contains(name), "\(name)")
        }
        let applied = try rows(path, "SELECT id, file FROM schema_migrations ORDER BY id")
        #expect(applied.map { $0["file"]! } == Migrator.carried.map(\.file))
    }

    @Test func aDatabaseFromANewerCacheIsRefusedAndLeftUntouched() async throws {
        let box = try Sandbox()
        try await box.cache("sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        do {
            let db = try Connection(path: box.database)
            try db.execute("INSERT INTO schema_migrations (id, file, applied_at) VALUES (9999, '9999_future.sql', 'later')")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: box.database))
        for arguments in [["status"], ["sync"], ["list", "x"], ["sources", "add", "y", "--kind", "jokes", "--url", "http://h/"]] {
            let result = try await box.cache(arguments)
            #expect(result.status == 78, "\(arguments)")
            #expect(result.stderr.contains("schema version 9999, newer than this cache knows"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.database)) == before)
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sources").first?["n"] == "1")
    }

    @Test func theDefaultPathFollowsXDGCacheHome() async throws {
        let box = try Sandbox()
        let result = try await box.run(Paths.cacheBinary, ["sources", "add", "x", "--kind", "jokes", "--url", "http://h/"],
                                 environment: ["CACHE_DB": "", "XDG_CACHE_HOME": box.folder + "/xdg"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: box.folder + "/xdg/cache/cache.sqlite3"))
    }
}
