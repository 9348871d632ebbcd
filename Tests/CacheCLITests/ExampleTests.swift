import Foundation
import Testing

/// The README's "From Swift" program, `Examples/states`: a package of its own that depends on
/// this one by path, as an app would, run against the loopback upstream. `.ci/run` builds it
/// before the suite, as it builds the release binary: its first build compiles the library again
/// (about a minute here), which would be a minute of every fresh clone's suite. Without a build
/// the tests that run it are skipped, saying why; with one, they build it again incrementally
/// (the sources may have changed since).
@Suite(.serialized, .gated) struct ExampleTests {
    static let folder = Paths.repository + "/Examples/states"
    static let hasABuild = FileManager.default.fileExists(atPath: folder + "/.build/debug/states")
    static let noBuild: Comment = "Examples/states has no build here: run 'swift build --package-path Examples/states' first, as .ci/run does"

    /// Builds the examples against the sources as they are now; the folder of their binaries.
    static let built: Result<String, TestFailure> = {
        forgetABuildThatMissesNewFiles()
        // Once more if the first build fails without saying why (on a loaded machine a
        // compiler job has been seen to end so, with the next build fine); a real error fails both.
        var failures: [String] = []
        for _ in 0..<2 {
            guard let build = try? RunningProcess("/usr/bin/env", ["swift", "build", "--package-path", folder], environment: [:]).wait().0 else {
                return .failure(TestFailure("swift build could not start"))
            }
            if build.status == 0 {
                try? projectSources.write(toFile: sourcesNote, atomically: true, encoding: .utf8)
                return .success(folder + "/.build/debug")
            }
            failures.append("exit \(build.status): \(build.stdout.suffix(2000)) \(build.stderr.suffix(2000))")
            if build.stdout.contains("error:") || build.stderr.contains("error:") { break }
        }
        return .failure(TestFailure("the example does not build: " + failures.joined(separator: "\n---\n")))
    }()

    /// SwiftPM plans a path dependency's files once: a file added to the project since the
    /// example's last build is not compiled into it ("cannot find 'X' in scope"). The files a
    /// good build had are noted beside it; when the project's differ, the build starts over.
    static var projectSources: String {
        let sources = Paths.repository + "/Sources"
        return (FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") || $0.hasSuffix(".c") }.sorted().joined(separator: "\n")
    }
    static let sourcesNote = folder + "/.build/project-sources.txt"

    static func forgetABuildThatMissesNewFiles() {
        if let noted = try? String(contentsOfFile: sourcesNote, encoding: .utf8), noted != projectSources {
            try? FileManager.default.removeItem(atPath: folder + "/.build")
        }
    }

    /// Run after run on fresh databases (60; 300 under `Scripts/soak`): each prints its preview,
    /// `refreshing` and the fresh rows, exits 0, and says nothing on stderr (a crash at exit once
    /// printed heap corruption there).
    @Test(.enabled(if: hasABuild, noBuild)) func runAfterRunEndsCleanly() async throws {
        let count = TestScale.pick(suite: 60, soak: 300)
        let states = try Self.built.get() + "/states"
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let url = upstream.baseURL + "/account"
        let shared = UncheckedSendable(box)
        let results = try await withThrowingTaskGroup(of: (Int, RunResult).self) { group in
            var results: [(Int, RunResult)] = []
            for run in 0..<count {
                if run >= 4, let done = try await group.next() { results.append(done) }
                group.addTask { (run, try await shared.value.run(states, [shared.value.folder + "/run\(run).sqlite3", url])) }
            }
            for try await done in group { results.append(done) }
            return results
        }
        #expect(results.count == count)
        var bad: [String] = []
        for (run, result) in results where result.status != 0 || !result.stderr.isEmpty
            || result.stdout != "preview 0 stale\nrefreshing\nfresh 6\n" {
            bad.append("run \(run): exit \(result.status), stdout \(result.stdout.debugDescription), stderr \(result.stderr.suffix(300).debugDescription)")
        }
        #expect(bad.isEmpty, "\(bad.count) of \(count) runs: \(bad.prefix(5).joined(separator: "\n"))")
        // A second run on one of those caches: fresh, so its preview alone.
        let again = try await box.run(states, [box.folder + "/run0.sqlite3", url])
        #expect(again.stdout == "preview 6 fresh\n" && again.status == 0, "\(again.stdout) \(again.stderr)")
    }

    @Test(.enabled(if: hasABuild, noBuild)) func aDeadUpstreamEndsInFailed() async throws {
        let states = try Self.built.get() + "/states"
        let box = try Sandbox()
        let result = try await box.run(states, [box.database, "http://127.0.0.1:9/account"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "preview 0 stale" && lines.last?.hasPrefix("failed cannot reach http://127.0.0.1:9/account") == true, "\(result.stdout)")
    }

    /// The README shows these very programs.
    @Test(arguments: ["states", "account-screen"]) func theReadmeShowsTheExample(_ name: String) throws {
        let program = try String(contentsOfFile: Self.folder + "/Sources/\(name)/main.swift", encoding: .utf8)
        let readme = Docs.manual
        #expect(readme.contains("```swift\n" + program + "```\n"), "README's From Swift section and Examples/states/Sources/\(name)/main.swift differ")
    }

    /// The seed app's account screen, driven by an observable model: skeleton cells first,
    /// then the holder, balance and transactions as the seed draws them; a dead upstream ends
    /// in the failure, under the skeletons (nothing was ever cached).
    @Test(.enabled(if: hasABuild, noBuild)) func theAccountScreenShowsEachState() async throws {
        let screen = try Self.built.get() + "/account-screen"
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let result = try await box.run(screen, [box.database, upstream.baseURL + "/account"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let screens = result.stdout.components(separatedBy: "\n[").map { $0.hasPrefix("[") ? $0 : "[" + $0 }
        #expect(screens.first?.hasPrefix("[initial]\n  ░░░░") == true, "\(result.stdout)")
        let last = screens.last ?? ""
        #expect(last.hasPrefix("[success]\nJane Appleseed  $1,234.56\n"), "\(last)")
        #expect(last.contains("  (R) Refund: Amazon  Mon, Nov 30  + 19.99\n  (U) Uber  Sun, Nov 29  - 23.50\n"), "\(last)")
        #expect(last.split(separator: "\n").count == 8, "\(last)")
        // Fresh now: the cached rows, no refresh.
        let again = try await box.run(screen, [box.database, upstream.baseURL + "/account"])
        #expect(!again.stdout.contains("refreshing") && again.stdout.hasSuffix("+ 2,000.00\n"), "\(again.stdout)")

        let dead = try await box.run(screen, [box.folder + "/dead.sqlite3", "http://127.0.0.1:9/account"])
        let failed = dead.stdout.components(separatedBy: "\n[").last ?? ""
        #expect(failed.hasPrefix("failure, stale]\n  ░░░░") && failed.contains("  ! cannot reach http://127.0.0.1:9/account"), "\(dead.stdout)")
    }

    /// A program outside the project, on the public API alone: a json source added and synced,
    /// its rows decoded into the program's own type, searched, read as of a moment, a row's
    /// log; a hung upstream's sync ends within its timeout; a model follows a `cache sync` by
    /// another process; and a copy on a read-only mount is read with `readOnly: true`, a write
    /// refused, not a byte changed.
    @Test(.enabled(if: hasABuild, noBuild)) func aProgramOnThePublicAPIGoesPastTheFirstScreen() async throws {
        let check = try Self.built.get() + "/library-check"
        let upstream = try LoopbackUpstream(), hung = try LoopbackUpstream()
        try hung.control(["delay": 20])
        let box = try Sandbox()
        let app = try RunningProcess(check, ["app", box.database, upstream.baseURL + "/api/items", hung.baseURL + "/api/items"], environment: [:])
        defer { if app.process.isRunning { app.process.terminate() } }
        // Once it has synced the hung source (its model comes next), another process syncs a
        // change, and another, until the program has seen one land.
        let deadline = ContinuousClock.now + .seconds(30)
        var count = 100
        while app.process.isRunning, ContinuousClock.now < deadline {
            try await pause(0.3)
            let runs = try await box.run(Paths.cacheBinary, ["--db", box.database, "sql", "SELECT count(*) AS n FROM sync_runs WHERE source = 'hung'", "--json"])
            guard (try? runs.jsonArray().first?["n"] as? Int) == 1 else { continue }
            count -= 1
            try upstream.setItems(count: count)
            #expect(try await box.cache("sync", "items", "--quiet").status == 0)
        }
        let (result, _) = await app.finished()
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stdout) \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "synced updated 100", "\(lines)")
        #expect(lines.contains("decoded 100, first item-1, stale false, undecodable 0"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("search 1 [item-1]") } && lines.contains("as of 100") && lines.contains("log loaded"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("hung: failed within the timeout: timed out after 1s") }, "\(lines)")
        #expect(lines.last.map { $0.hasPrefix("model followed another process's sync: 9") } == true, "\(lines)")
    }

    /// The program on a copy on a read-only mount (a tmpfs of a mount namespace of its own):
    /// `readOnly: true` reads it and searches it, a write is refused, not a byte changes.
    @Test(.enabled(if: hasABuild, noBuild), .enabled(if: DatabaseFileIdentityTests.canMount, "needs root and unshare to mount a read-only tmpfs"))
    func aProgramReadsACopyOnAReadOnlyMount() async throws {
        let check = try Self.built.get() + "/library-check"
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--key", "id", "--url", upstream.baseURL + "/api/items"]).status == 0)
        #expect(box.cacheInProcess(["sync", "items"]).status == 0)
        #expect(box.cacheInProcess(["reindex", "items"]).status == 0)
        let mount = box.folder + "/mnt"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let copy = mount + "/cache.sqlite3"
        let script = """
            set -u
            mount -t tmpfs -o size=4m tmpfs \(mount) && cp \(box.database) \(copy) && mount -o remount,ro \(mount)
            sum=$(sha256sum \(copy))
            \(check) read-only \(copy)
            [ "$sum" = "$(sha256sum \(copy))" ] && ls \(mount) | tr '\\n' ' ' && echo unchanged
            """
        let readOnly = try await box.run("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/bash", "-c", script])
        #expect(readOnly.stdout.contains("read-only: 100 rows, search 20\n"), "\(readOnly.stdout) \(readOnly.stderr)")
        #expect(readOnly.stdout.contains("read-only: write refused: the cache at \(copy) is read-only here: it was opened with readOnly: true"), "\(readOnly.stdout)")
        #expect(readOnly.stdout.hasSuffix("cache.sqlite3 unchanged\n"), "\(readOnly.stdout) \(readOnly.stderr)")
    }
}
