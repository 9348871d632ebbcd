import Foundation
import OfflineCache
import Testing

/// Which files cache writes to, and reading where nothing can be written: a read-only mount, a
/// full disk. Through the built binary.
@Suite(.gated) struct DatabaseFileIdentityTests {
    func sqlite3(_ box: Sandbox, _ path: String, _ sql: String) throws -> String {
        try box.run("/usr/bin/env", ["sqlite3", path, sql]).stdout
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftAlone() async throws {
        let box = try Sandbox()
        let other = box.folder + "/other.db"
        _ = try sqlite3(box, other, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        let before = try #require(FileManager.default.contents(atPath: other))
        for arguments in [["status"], ["sources", "list"], ["list", "x"], ["history"],
                          ["sources", "add", "j", "--kind", "jokes", "--url", "http://127.0.0.1:9/"], ["sync"]] {
            let result = try await box.run(Paths.cacheBinary, arguments, environment: ["CACHE_DB": other])
            #expect(result.status == 78, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "cache: \(other) is not a cache database (it is another program's SQLite database); nothing was written to it\n",
                    "\(arguments): \(result.stderr)")
        }
        #expect(FileManager.default.contents(atPath: other) == before)
        #expect(!FileManager.default.fileExists(atPath: other + "-wal"))
        #expect(try sqlite3(box, other, "PRAGMA journal_mode") == "delete\n")
    }

    @Test func aFileThatIsNotSQLiteIsRefusedInOneLine() async throws {
        let box = try Sandbox()
        let text = box.folder + "/notes.txt"
        try Data("just some text, long enough to be read as a header by SQLite\n".utf8).write(to: URL(fileURLWithPath: text))
        let result = try await box.run(Paths.cacheBinary, ["sources", "add", "j", "--kind", "jokes", "--url", "http://127.0.0.1:9/"],
                                 environment: ["CACHE_DB": text])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("is not a cache database (it is not an SQLite database)"))
    }

    @Test func ourFilesAreMarkedAndAnUnmarkedCacheIsAdopted() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try sqlite3(box, box.database, "PRAGMA application_id") == "\(CacheDatabase.applicationID)\n")
        // A cache made before the mark: still ours, marked on its next write.
        _ = try sqlite3(box, box.database, "PRAGMA application_id = 0")
        #expect(try await box.cache("status").status == 0)
        #expect(try await box.cache("sync").status == 0)
        #expect(try sqlite3(box, box.database, "PRAGMA application_id") == "\(CacheDatabase.applicationID)\n")
    }

    /// Runs `script` as root in a mount namespace of its own, so mounts vanish with it.
    func inMountNamespace(_ box: Sandbox, _ script: String) throws -> RunResult {
        try box.run("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/bash", "-c", script])
    }

    static let canMount: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "--propagation", "private", "/bin/sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// A synced bank's database copied onto a small tmpfs of a mount namespace of its own, made
    /// read-only or filled up (`place`), and each of `commands` run on it by the binary: each
    /// one's exit status and what it printed, and the copy's path.
    func onAMountedCopy(_ place: String, _ commands: [[String]]) async throws -> (results: [(status: Int32?, output: String)], database: String) {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let mount = box.folder + "/mnt"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let database = mount + "/cache.sqlite3"
        let fill = place == "read-only" ? "mount -o remount,ro \(mount)" : "dd if=/dev/zero of=\(mount)/filler bs=4k 2>/dev/null || true"
        var script = "set -u\nmount -t tmpfs -o size=2m tmpfs \(mount)\ncp \(box.database) \(database)\n\(fill)"
        for (index, arguments) in commands.enumerated() {
            script += "\nCACHE_DB=\(database) \(Paths.cacheBinary) \(arguments.map { "'\($0)'" }.joined(separator: " ")) > \(box.folder)/out\(index) 2>&1; echo \"rc \(index) $?\""
        }
        let result = try inMountNamespace(box, script)
        let results = commands.indices.map { index -> (status: Int32?, output: String) in
            let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("rc \(index) ") }
            return (line.flatMap { Int32($0.split(separator: " ").last ?? "") },
                    (try? String(contentsOfFile: box.folder + "/out\(index)", encoding: .utf8)) ?? "")
        }
        return (results, database)
    }

    /// On a read-only mount, the commands that write say so, and how to read it instead (77).
    @Test(.enabled(if: canMount)) func writingOnAReadOnlyMountSaysItIsReadOnly() async throws {
        let commands = [["sync"], ["sources", "set", "bank", "--ttl", "1h"], ["prune", "--keep", "1d"]]
        let (results, database) = try await onAMountedCopy("read-only", commands)
        for (command, result) in zip(commands, results) {
            #expect(result.status == 77, "\(command): \(result.output)")
            #expect(result.output.contains("\(database) is on a read-only file system") && result.output.contains("read it with --read-only"),
                    "\(command): \(result.output)")
        }
    }

    /// On a read-only mount, and on a full disk, the commands that read still serve the cache.
    @Test(.enabled(if: canMount), arguments: ["read-only", "full"])
    func readingWorksWhereNothingCanBeWritten(_ place: String) async throws {
        let commands = [["list", "bank", "--offline", "--json"], ["status", "--json"], ["sources", "list", "--json"],
                        ["history", "--json"], ["export", "bank", "--ndjson"], ["sql", "SELECT count(*) AS n FROM transactions", "--json"],
                        ["check"]]
        let (results, _) = try await onAMountedCopy(place, commands)
        for (command, result) in zip(commands, results) {
            #expect(result.status == 0, "\(place): \(command): \(result.output)")
        }
        #expect(results[0].output.contains("\"vendor\": \"Payroll\""), "\(place): \(results[0].output)")
    }
}
