import Foundation
import Testing

/// Sources sharded over primaries, read as one: several `--db` on a command that reads open
/// every file read-only and show them as one cache, each source from the file that holds it;
/// a source in two files, a command that writes, too many files are refused.
@Suite(.gated) struct ShardedReadTests {
    /// Two caches, each holding its own source (as two primaries would): `alpha` in the
    /// sandbox's database, `beta` in a second file.
    func twoFiles(_ box: Sandbox) throws -> (first: String, second: String) {
        try box.syncedFileSource("alpha", #"[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]"#)
        let second = box.folder + "/second.sqlite3"
        let file = box.folder + "/beta.json"
        try Data(#"[{"id": 7, "title": "the lighthouse keeper"}]"#.utf8).write(to: URL(fileURLWithPath: file))
        let environment = ["CACHE_DB": second]
        #expect(box.cacheInProcess(["sources", "add", "beta", "--kind", "json", "--key", "id", "--url", "file://" + file], environment: environment).status == 0)
        #expect(box.cacheInProcess(["sync", "beta"], environment: environment).status == 0)
        // Its primary builds its search index (read-only, the files cannot).
        #expect(box.cacheInProcess(["reindex", "beta"], environment: environment).status == 0)
        return (box.database, second)
    }

    /// The file's bytes and which side files lie beside it: what a read must not change.
    func state(_ path: String) throws -> (bytes: Data, sides: [String]) {
        (try Data(contentsOf: URL(fileURLWithPath: path)), ["-wal", "-shm", "-journal"].filter { FileManager.default.fileExists(atPath: path + $0) })
    }

    @Test func everyReadingCommandReadsBothFilesAsOne() throws {
        let box = try Sandbox()
        let (first, second) = try twoFiles(box)
        let before = try [state(first), state(second)]
        func both(_ arguments: String...) -> RunResult {
            let result = box.cacheInProcess(["--db", first, "--db", second] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result
        }

        let statuses = try both("status", "--json").jsonArray()
        #expect(statuses.map { $0["source"] as? String } == ["alpha", "beta"])
        #expect(statuses.map { $0["database"] as? String } == [first, second])
        #expect(statuses.allSatisfy { $0["read_only"] as? Bool == true && $0["rows"] as? Int != nil })
        let table = both("status")
        #expect(table.stdout.split(separator: "\n").first?.hasSuffix("DB") == true, "\(table.stdout)")
        #expect(table.stdout.contains(second) && table.stderr.contains("databases: \(first), \(second)"), "\(table.stdout)\(table.stderr)")
        #expect(try both("sources", "list", "--json").jsonArray().map { $0["database"] as? String } == [first, second])
        #expect(try both("list", "alpha", "--json").jsonArray().count == 2)
        #expect(try both("list", "beta", "--json").jsonArray().first?["key"] as? String == "7")
        #expect(both("export", "beta", "--ndjson").stdout.contains("lighthouse"))
        #expect(try both("search", "beta", "lighthouse", "--json").jsonArray().count == 1)
        #expect(both("log", "beta", "7").stdout.contains("the lighthouse keeper"))
        #expect(both("diff", "beta").stdout.contains("loaded into an empty cache"))
        let history = try both("history", "--json").jsonArray()
        #expect(Set(history.compactMap { $0["source"] as? String }) == ["alpha", "beta"])
        #expect(history.first { $0["source"] as? String == "beta" }?["database"] as? String == second)
        #expect(try both("history", "beta", "--json").jsonArray().count == 1)
        let metrics = both("metrics").stdout
        #expect(metrics.contains("cache_rows{source=\"alpha\"} 2") && metrics.contains("cache_rows{source=\"beta\"} 1"), "\(metrics)")
        // Each file is behind its own primary: one lag sample per file.
        #expect(metrics.contains("cache_replica_lag_seconds{db=\"\(second)\"}"), "\(metrics)")
        #expect(both("status", "--max-lag", "1h").stdout.contains("\(second): ok: "))

        // sql: each source's views by their names alone, from the file that holds them; the
        // second file's own tables as db2.
        let joined = try both("sql", "SELECT a.name, b.title FROM cached_alpha a, cached_beta b WHERE a.key = '1'", "--json").jsonArray()
        #expect(joined.first?["title"] as? String == "the lighthouse keeper" && joined.first?["name"] as? String == "ada", "\(joined)")
        #expect(try both("sql", "SELECT name FROM db2.sources", "--json").jsonArray().map { $0["name"] as? String } == ["beta"])
        let refused = box.cacheInProcess(["--db", first, "--db", second, "sql", "DELETE FROM db2.records"])
        #expect(refused.status == 64 && refused.stderr.contains("refused"), "\(refused.stderr)")

        // A name in neither file: the usual 66, with a suggestion from both.
        let unknown = box.cacheInProcess(["--db", first, "--db", second, "list", "betaa"])
        #expect(unknown.status == 66 && unknown.stderr.contains("Did you mean 'beta'?"), "\(unknown.stderr)")
        let after = try [state(first), state(second)]
        #expect(after.map(\.bytes) == before.map(\.bytes) && after.map(\.sides) == before.map(\.sides), "a read across two files changed one")
    }

    @Test func aSourceInTwoFilesAWritingCommandAndTooManyFilesAreRefused() throws {
        let box = try Sandbox()
        let (first, second) = try twoFiles(box)
        // `beta` in the first file too.
        try box.syncedFileSource("beta", #"[{"id": 9}]"#)
        let twice = box.cacheInProcess(["--db", first, "--db", second, "status"])
        #expect(twice.status == 78, "\(twice.stderr)")
        #expect(twice.stderr.contains("'beta' is in both \(first) and \(second)"), "\(twice.stderr)")
        #expect(box.cacheInProcess(["--db", first, "--db", second, "sql", "SELECT 1"]).status == 78)
        #expect(box.cacheInProcess(["sources", "remove", "beta", "--yes"]).status == 0)

        for writing in [["sync"], ["sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/"], ["prune", "--keep", "1d"],
                        ["reindex"], ["check"], ["apply", "-"], ["sources", "remove", "beta", "--yes"]] {
            let result = box.cacheInProcess(["--db", first, "--db", second] + writing)
            #expect(result.status == 64, "\(writing): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("give one --db"), "\(writing): \(result.stderr)")
        }
        let many = box.cacheInProcess((0..<11).flatMap { ["--db", box.folder + "/f\($0).sqlite3"] } + ["status"])
        #expect(many.status == 64 && many.stderr.contains("at most 10"), "\(many.stderr)")
        let same = box.cacheInProcess(["--db", first, "--db", first, "status"])
        #expect(same.status == 64 && same.stderr.contains("given twice"), "\(same.stderr)")
        let spelled = box.cacheInProcess(["--db", second, "--db", box.folder + "/./second.sqlite3", "status"])
        #expect(spelled.status == 64 && spelled.stderr.contains("are the same file"), "\(spelled.stderr)")
        let missing = box.cacheInProcess(["--db", first, "--db", box.folder + "/none.sqlite3", "status"])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.folder + "/none.sqlite3"), "a read made a file")
    }

    /// `cache serve` over two files: the routes answer for each source from its file, /healthz
    /// and /metrics for both, and the event cursor carries each file's newest run.
    @Test func serveReadsBothFilesAsOne() throws {
        let box = try Sandbox()
        let (first, second) = try twoFiles(box)
        let server = try ServeProcess(box, ["--db", first, "--db", second, "--max-lag", "1h"])
        let sources = try server.get("/sources").jsonArray()
        #expect(sources.map { $0["source"] as? String } == ["alpha", "beta"])
        #expect(sources.map { $0["database"] as? String } == [first, second])
        let beta = try server.get("/sources/beta/rows")
        #expect(beta.status == 200 && beta.headers["cache-status"]?.contains("detail=lag-") == true, "\(beta.status) \(beta.headers)")
        #expect(((try beta.json()["rows"]) as? [[String: Any]])?.first?["key"] as? String == "7")
        #expect(try server.get("/sources/alpha/rows/2").json()["key"] as? String == "2")
        #expect(try server.get("/sources/beta/rows/7/log").status == 200)
        #expect(try server.get("/sources/gamma/rows").status == 404)
        #expect(try server.request("POST", "/sources/beta/refresh").status == 409)
        let health = try server.get("/healthz")
        #expect(health.status == 200, "\(health.text)")
        #expect((try health.json()["files"] as? [[String: Any]])?.map { $0["database"] as? String } == [first, second], "\(health.text)")
        #expect(try server.get("/metrics").text.contains("cache_replica_lag_seconds{db=\"\(first)\"}"))

        // Each file numbers its own runs: the cursor is both numbers, and a reconnect from
        // "0-0" replays both files' runs, from "1-0" only the second's.
        func events(_ lastEventID: String?, until expected: String) throws -> String {
            let socket = try HTTPProbe.connect(port: server.port, timeout: 5)
            defer { close(socket) }
            try HTTPProbe.send(socket, Data("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\(lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "")\r\n".utf8))
            var stream = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = Date().addingTimeInterval(5)
            while !stream.contains(expected), Date() < deadline {
                let count = recv(socket, &buffer, buffer.count, 0)
                if count <= 0 { break }
                stream += String(decoding: buffer[0..<count], as: UTF8.self)
            }
            return stream
        }
        let fresh = "retry: 2000\nid: 1-1\n\n"
        #expect(try events(nil, until: fresh).contains(fresh))
        let replayed = try events("0-0", until: "id: 1-1\nevent: updated")
        #expect(replayed.contains("id: 1-0\nevent: updated") && replayed.contains("id: 1-1\nevent: updated"), "\(replayed)")
        let onlySecond = try events("1-0", until: "id: 1-1\nevent: updated")
        #expect(onlySecond.contains("id: 1-1\nevent: updated") && !onlySecond.contains("\"alpha\""), "\(onlySecond)")
        // An id of one file is not a cursor of two: a new client's stream.
        #expect(try events("1", until: fresh).contains(fresh))
    }

    /// A source a primary adds after `serve` started, or one moved from one primary's file to
    /// another's, is found where it now is; a name in neither is a 404.
    @Test func serveFindsASourceWhereItNowIs() async throws {
        let box = try Sandbox()
        let (first, second) = try twoFiles(box)
        // As Litestream's followers keep them: rollback mode, read with ordinary locks.
        for file in [first, second] {
            #expect(try await box.run("/usr/bin/sqlite3", [file, "PRAGMA journal_mode=DELETE"]).status == 0)
        }
        let server = try ServeProcess(box, ["--db", first, "--db", second])
        #expect(try server.get("/sources/beta/rows").status == 200)
        #expect(try server.get("/sources/gamma/rows").status == 404)
        // gamma added to the second file; beta moved to the first.
        let file = box.folder + "/gamma.json"
        try Data(#"[{"id": 5}]"#.utf8).write(to: URL(fileURLWithPath: file))
        let onSecond = ["CACHE_DB": second]
        #expect(box.cacheInProcess(["sources", "add", "gamma", "--kind", "json", "--key", "id", "--url", "file://" + file], environment: onSecond).status == 0)
        #expect(box.cacheInProcess(["sync", "gamma"], environment: onSecond).status == 0)
        #expect(box.cacheInProcess(["sources", "remove", "beta", "--yes"], environment: onSecond).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "beta", "--kind", "json", "--key", "id", "--url", "file://" + file]).status == 0)
        #expect(box.cacheInProcess(["sync", "beta"]).status == 0)
        // beta first: the file noted for it no longer has it.
        let beta = try server.get("/sources/beta")
        #expect(beta.status == 200, "\(beta.text)")
        #expect(try beta.json()["database"] as? String == first, "\(beta.text)")
        let gamma = try server.get("/sources/gamma/rows")
        #expect(gamma.status == 200, "\(gamma.text)")
        #expect(try server.get("/sources/nope").status == 404)
    }
}
