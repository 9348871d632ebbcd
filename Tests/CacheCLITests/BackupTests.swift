import Foundation
import Testing

/// `cache backup PATH` (issue 54): a consistent copy made while another connection holds a write
/// in progress and `cache serve` reads, checked before it is reported done; refusals that change
/// nothing; and the runbook's upgrade and roll-back (docs/operations.md), run as printed.
@Suite(.gated) struct BackupTests {
    /// A cache with the generated account `bank` of `count` transactions, synced.
    static func bank(_ count: Int) async throws -> (LoopbackUpstream, Sandbox) {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.generate(count: count, seed: 1)
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "1h")
        let synced = try await box.cache("sync")
        #expect(synced.status == 0, "\(synced.stderr)")
        return (upstream, box)
    }

    func sqlite3(_ path: String, _ sql: String) throws -> String {
        let result = try RunningProcess("/usr/bin/env", ["sqlite3", path, sql], environment: [:]).wait().0
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aBackupWhileAWriteIsInProgressBesideServeIsOneMomentChecked() async throws {
        let (_, box) = try await Self.bank(5000)
        let server = try ServeProcess(box)
        #expect(try server.get("/sources/bank/rows?limit=1").status == 200)
        // Another connection deletes every transaction and holds its transaction open until told.
        let holding = box.folder + "/holding", release = box.folder + "/release"
        let writer = try RunningProcess(Paths.python, ["-c", """
            import os, sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM transactions")
            open(sys.argv[2], "w").close()
            while not os.path.exists(sys.argv[3]):
                time.sleep(0.01)
            db.execute("COMMIT")
            """, box.database, holding, release], environment: [:])
        try poll(seconds: 20) { FileManager.default.fileExists(atPath: holding) }
        let copy = box.folder + "/copy.sqlite3"
        let made = try await box.cache("backup", copy)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stderr.contains("Backed up 1 source to \(copy)") && made.stderr.contains("its check passed"), "\(made.stderr)")
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        #expect(writer.wait().0.status == 0)
        // The copy is the moment before the write: every transaction; the file now has none.
        #expect(try sqlite3(copy, "SELECT count(*) FROM transactions") == "5000")
        #expect(try sqlite3(box.database, "SELECT count(*) FROM transactions") == "0")
        #expect(try await box.cache("--db", copy, "check").status == 0)
        // Readable by this user alone, as the cache is, whatever the umask.
        #expect(try FileManager.default.attributesOfItem(atPath: copy)[.posixPermissions] as? Int == 0o600)
        #expect(try await box.cache("--db", copy, "list", "bank", "--offline", "--limit", "1").status == 0)
        // Nothing but the copy is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: box.folder).filter { $0.contains("partial") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func aBackupNeverReplacesAFileAndSaysWhereItCannotWrite() async throws {
        let (_, box) = try await Self.bank(10)
        let taken = box.folder + "/taken.sqlite3"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: taken))
        let refused = try await box.cache("backup", taken)
        #expect(refused.status == 73 && refused.stderr.contains("a file is already there"), "\(refused.status) \(refused.stderr)")
        #expect(try String(contentsOfFile: taken, encoding: .utf8) == "mine")
        let nowhere = try await box.cache("backup", box.folder + "/no/such/folder/copy.sqlite3")
        #expect(nowhere.status == 73 && nowhere.stderr.contains("no/such/folder"), "\(nowhere.status) \(nowhere.stderr)")
        // A follower (read-only) backs up too: it writes nothing to the file it reads.
        let follower = try await box.cache("--read-only", "backup", box.folder + "/from-a-follower.sqlite3")
        #expect(follower.status == 0, "\(follower.stderr)")
    }

    /// docs/operations.md's upgrade and roll-back blocks, run as printed under `bash -e`: `HOME`
    /// is the sandbox, `systemctl` a stand-in that notes what it was asked, `$NEW` the built
    /// binary. A newer cache's migration is then stood in for by a schema version past this
    /// binary's: it refuses the file, naming both (78), and the roll-back puts the backup back.
    @Test func theRunbookUpgradesAndRollsBackAsPrinted() async throws {
        let (_, box) = try await Self.bank(50)
        let manual = Docs.text("docs/operations.md")
        func block(after marker: String) throws -> String {
            let start = try #require(manual.range(of: marker), "docs/operations.md has no \(marker)")
            let open = try #require(manual[start.upperBound...].range(of: "```sh\n"))
            let close = try #require(manual[open.upperBound...].range(of: "```"))
            return String(manual[open.upperBound..<close.lowerBound])
        }
        let bin = box.folder + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/cache", withDestinationPath: Paths.cacheBinary)
        try "#!/bin/sh\necho \"$@\" >> \"$HOME/systemctl.log\"\n".write(toFile: bin + "/systemctl", atomically: true, encoding: .utf8)
        chmod(bin + "/systemctl", 0o755)
        let environment = ["HOME": box.folder, "CACHE_DB": box.database, "NEW": Paths.cacheBinary,
                           "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        func run(_ script: String) async throws -> RunResult {
            try await box.run("/bin/bash", ["-e", "-c", "cd '\(Paths.repository)'\n" + script], environment: environment)
        }
        let before = try sqlite3(box.database, "SELECT count(*), sum(amount) FROM transactions")
        let upgraded = try await run(try block(after: "To upgrade"))
        #expect(upgraded.status == 0, "\(upgraded.stdout)\n\(upgraded.stderr)")
        let backups = try FileManager.default.contentsOfDirectory(atPath: box.folder).filter { $0.hasPrefix("cache-before-upgrade-") }
        #expect(backups.count == 1, "\(backups)")
        let asked = try String(contentsOfFile: box.folder + "/systemctl.log", encoding: .utf8)
        #expect(asked.contains("stop cache-sync.timer cache-sync.service cache-serve.service") && asked.contains("start cache-sync.timer cache-serve.service"), "\(asked)")

        // A newer cache's migration, as far as this binary can tell: it refuses the file, saying so.
        _ = try sqlite3(box.database, "INSERT INTO schema_migrations (id, file, applied_at) VALUES (9999, '9999_from_a_newer_cache.sql', '2027-01-01T00:00:00.000Z'); DELETE FROM transactions")
        let refused = try await box.cache("list", "bank", "--offline")
        #expect(refused.status == 78 && refused.stderr.contains("schema version 9999, newer than this cache knows"), "\(refused.status) \(refused.stderr)")

        let rolledBack = try await run(try block(after: "To roll back"))
        #expect(rolledBack.status == 0, "\(rolledBack.stdout)\n\(rolledBack.stderr)")
        #expect(try sqlite3(box.database, "SELECT count(*), sum(amount) FROM transactions") == before)
        #expect(try await box.cache("list", "bank", "--offline", "--limit", "1").status == 0)
    }
}
