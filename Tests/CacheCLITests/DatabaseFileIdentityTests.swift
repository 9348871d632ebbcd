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

    /// On a read-only mount, the commands that write say so, and how to read it instead (77).
    @Test(.enabled(if: canMount)) func writingOnAReadOnlyMountSaysItIsReadOnly() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let mount = box.folder + "/mnt"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let database = mount + "/cache.sqlite3"
        var script = "set -u\nmount -t tmpfs -o size=2m tmpfs \(mount)\ncp \(box.database) \(database)\nmount -o remount,ro \(mount)"
        let commands = [["sync"], ["sources", "set", "bank", "--ttl", "1h"], ["prune", "--keep", "1d"]]
        for (index, arguments) in commands.enumerated() {
            script += "\nCACHE_DB=\(database) \(Paths.cacheBinary) \(arguments.joined(separator: " ")) > \(box.folder)/out\(index) 2>&1; echo \"rc \(index) $?\""
        }
        let result = try inMountNamespace(box, script)
        for index in commands.indices {
            let output = (try? String(contentsOfFile: box.folder + "/out\(index)", encoding: .utf8)) ?? ""
            #expect(result.stdout.contains("rc \(index) 77\n"), "\(commands[index]): \(result.stdout) \(output)")
            #expect(output.contains("\(database) is on a read-only file system") && output.contains("read it with --read-only"),
                    "\(commands[index]): \(output)")
        }
    }

    /// On a read-only mount, and on a full disk, the commands that read still serve the cache.
    @Test(.enabled(if: canMount), arguments: ["read-only", "full"])
    func readingWorksWhereNothingCanBeWritten(_ place: String) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync").status == 0)
        let mount = box.folder + "/mnt"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let database = mount + "/cache.sqlite3"
        let fill = place == "read-only" ? "mount -o remount,ro \(mount)" : "dd if=/dev/zero of=\(mount)/filler bs=4k 2>/dev/null || true"
        var script = """
            set -u
            mount -t tmpfs -o size=2m tmpfs \(mount)
            cp \(box.database) \(database)
            \(fill)
            """
        let commands = [["list", "bank", "--offline", "--json"], ["status", "--json"], ["sources", "list", "--json"],
                        ["history", "--json"], ["export", "bank", "--ndjson"], ["sql", "SELECT count(*) AS n FROM transactions", "--json"],
                        ["check"]]
        for (index, arguments) in commands.enumerated() {
            script += "\nCACHE_DB=\(database) \(Paths.cacheBinary) \(arguments.map { "'\($0)'" }.joined(separator: " ")) > \(box.folder)/out\(index) 2>&1; echo \"rc \(index) $?\""
        }
        let result = try inMountNamespace(box, script)
        for index in commands.indices {
            let output = (try? String(contentsOfFile: box.folder + "/out\(index)", encoding: .utf8)) ?? ""
            #expect(result.stdout.contains("rc \(index) 0\n"), "\(place): \(commands[index]): \(output)")
        }
        let listed = (try? String(contentsOfFile: box.folder + "/out0", encoding: .utf8)) ?? ""
        #expect(listed.contains("\"vendor\": \"Payroll\""), "\(place): \(listed)")
    }
}
