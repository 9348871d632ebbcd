import Foundation
import Testing

/// The README's "From Swift" program, `Examples/states`: a package of its own that depends on
/// this one by path, as an app would. Built here (incrementally; `.ci/run` builds it first) and
/// run against the loopback upstream.
@Suite(.serialized, .gated) struct ExampleTests {
    static let folder = Paths.repository + "/Examples/states"

    /// Builds the example against the sources as they are now; its binary's path.
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
                return .success(folder + "/.build/debug/states")
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

    /// 300 runs on fresh databases: each prints its preview, `refreshing` and the fresh rows,
    /// exits 0, and says nothing on stderr (a crash at exit once printed heap corruption there).
    @Test func threeHundredRunsEachEndCleanly() async throws {
        let states = try Self.built.get()
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let url = upstream.baseURL + "/account"
        let shared = UncheckedSendable(box)
        let results = try await withThrowingTaskGroup(of: (Int, RunResult).self) { group in
            var results: [(Int, RunResult)] = []
            for run in 0..<300 {
                if run >= 4, let done = try await group.next() { results.append(done) }
                group.addTask { (run, try await shared.value.run(states, [shared.value.folder + "/run\(run).sqlite3", url])) }
            }
            for try await done in group { results.append(done) }
            return results
        }
        #expect(results.count == 300)
        var bad: [String] = []
        for (run, result) in results where result.status != 0 || !result.stderr.isEmpty
            || result.stdout != "preview 0 stale\nrefreshing\nfresh 6\n" {
            bad.append("run \(run): exit \(result.status), stdout \(result.stdout.debugDescription), stderr \(result.stderr.suffix(300).debugDescription)")
        }
        #expect(bad.isEmpty, "\(bad.count) of 300 runs: \(bad.prefix(5).joined(separator: "\n"))")
        // A second run on one of those caches: fresh, so its preview alone.
        let again = try await box.run(states, [box.folder + "/run0.sqlite3", url])
        #expect(again.stdout == "preview 6 fresh\n" && again.status == 0, "\(again.stdout) \(again.stderr)")
    }

    @Test func aDeadUpstreamEndsInFailed() async throws {
        let states = try Self.built.get()
        let box = try Sandbox()
        let result = try await box.run(states, [box.database, "http://127.0.0.1:9/account"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "preview 0 stale" && lines.last?.hasPrefix("failed cannot reach http://127.0.0.1:9/account") == true, "\(result.stdout)")
    }

    /// The README shows this very program.
    @Test func theReadmeShowsTheExample() throws {
        let program = try String(contentsOfFile: Self.folder + "/Sources/states/main.swift", encoding: .utf8)
        let readme = try String(contentsOfFile: Paths.repository + "/README.md", encoding: .utf8)
        #expect(readme.contains("```swift\n" + program + "```\n"), "README's From Swift section and Examples/states/Sources/states/main.swift differ")
    }
}
