import Foundation
import Testing

/// Exit codes that once disagreed with the README's table: in this process (`CLI.run`'s status is
/// what `main` exits with) on canned answers, and through the built binary where the process is
/// the point (another user, a terminal's question).
@Suite(.gated) struct ExitCodeTests {
    @Test func anEmptyQueryIsAUsageError() throws {
        let box = try Sandbox()
        #expect(box.cli("sources", "add", "j", "--kind", "jokes", "--url", "http://127.0.0.1:9/").status == 0)
        for sql in ["", "   ", "/* only a comment */"] {
            let result = box.cli("sql", sql)
            #expect(result.status == 64, "\(sql.debugDescription): \(result.stderr)")
            #expect(result.stderr.contains("no SQL statement to run"), "\(result.stderr)")
        }
    }

    @Test func aMissingFileIsNoInputAndIsNotRetried() throws {
        let box = try Sandbox()
        box.cli("sources", "add", "f", "--kind", "jokes", "--url", "file://" + box.folder + "/missing.json")
        let result = box.cli("sync", "f", "--json")
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("no readable file at \(box.folder)/missing.json"), "\(result.stderr)")
        #expect(try result.jsonArray().first?["attempts"] as? Int == 1)
    }

    @Test func aDiffOfARunThatDoesNotExistIsNoInput() throws {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        box.cli("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", upstream: upstream)
        #expect(box.cli("sync", upstream: upstream).status == 0)
        #expect(box.cli("diff", "bank", "--run", "1", upstream: upstream).status == 0)
        let missing = box.cli("diff", "bank", "--run", "999", upstream: upstream)
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("no sync run 999 of 'bank'"), "\(missing.stderr)")
    }

    @Test func aURLWithoutAHostIsRefusedAtAdd() throws {
        let box = try Sandbox()
        for url in ["http://", "https://", "http:///account"] {
            let result = box.cli("sources", "add", "x", "--kind", "jokes", "--url", url)
            #expect(result.status == 64, "\(url): \(result.stderr)")
        }
        #expect(box.cli("sources", "list", "--json").stdout.contains("\"x\"") == false)
    }

    /// A database this user may not read exits 77 (permission), not 74 (damaged). Run as the
    /// `nobody` user through setpriv, since root reads any file; skipped where that cannot be done.
    @Test(.enabled(if: nobodyRunsTheBinary, "the nobody user cannot run the cache binary here"))
    func aDatabaseThatMayNotBeReadIsAPermissionError() async throws {
        let box = try Sandbox()
        try await box.cache("sources", "add", "j", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        chmod(box.folder, 0o755)
        chmod(box.database, 0o600)
        // A copy of the binary that `nobody` may run, wherever the build folder is.
        let binary = box.folder + "/cache"
        try FileManager.default.copyItem(atPath: Paths.cacheBinary, toPath: binary)
        chmod(binary, 0o755)
        func asNobody(_ arguments: [String]) throws -> RunResult {
            try box.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                        environment: ["CACHE_DB": box.database])
        }
        for arguments in [["status"], ["list", "j", "--offline"], ["sync", "j"], ["sql", "SELECT 1"]] {
            let result = try asNobody(arguments)
            #expect(result.status == 77, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("permission denied"), "\(arguments): \(result.stderr)")
        }
    }

    /// A script must tell "no rows" from "never fetched" by the exit code alone.
    @Test func anEmptyListSaysWhyByItsExitCode() throws {
        let upstream = CannedUpstream()
        let box = try Sandbox()
        box.cli("sources", "add", "down", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", upstream: upstream)
        box.cli("sources", "add", "empty", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/random/0", upstream: upstream)
        #expect(box.cli("sync", "empty", upstream: upstream).status == 0)
        upstream.answerEverything(status: 503)

        // Never fetched, and the refresh it waited for failed: unavailable.
        let failed = box.cli("list", "down", "--wait", "--json", upstream: upstream)
        #expect(failed.status == 69, "\(failed.stderr)")
        #expect(failed.stdout == "[]\n")
        // Never fetched, and no refresh asked for.
        #expect(box.cli("list", "down", "--offline", "--json", upstream: upstream).status == 69)
        // Synced, and upstream had nothing: no rows, exit 0.
        let none = box.cli("list", "empty", "--offline", "--json", upstream: upstream)
        #expect(none.status == 0 && none.stdout == "[]\n", "\(none.stderr)")
    }

    @Test func listingCommandsWithNoDatabaseYetPrintAnEmptyList() throws {
        let box = try Sandbox()
        for arguments in [["sources", "list", "--json"], ["status", "--json"]] {
            let result = box.cli(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout == "[]\n", "\(arguments): \(result.stdout)")
        }
        for arguments in [["sources", "list"], ["status"]] {
            let result = box.cli(arguments)
            #expect(result.status == 0 && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("No sources yet"), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: box.database))
    }

    @Test func aMistypedSourceIsSuggestedAndListAloneListsSources() throws {
        let box = try Sandbox()
        box.cli("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/account?page=2&api_key=s3cret",
                      "--ttl", "1h30m")
        let typo = box.cli("list", "bnak")
        #expect(typo.status == 66)
        #expect(typo.stderr == "cache: no source named 'bnak'. Did you mean 'bank'?\n", "\(typo.stderr)")
        #expect(box.cli("list", "zzzzzzzz").stderr == "cache: no source named 'zzzzzzzz'\n")
        let listed = box.cli("list", "--json")
        #expect(listed.status == 0)
        let source = try #require(try listed.jsonArray().first)
        #expect(source["name"] as? String == "bank" && source["ttl_s"] as? Int == 5400)
        #expect(source["url"] as? String == "http://127.0.0.1:9/account?page=2&api_key=REDACTED")
        #expect(!listed.stdout.contains("s3cret"))
    }

    /// Removing a source deletes what it holds: asked on a terminal, `--yes` elsewhere, and run
    /// numbers are never handed out again.
    @Test func removingASourceAsksAndRunIdsNeverRepeat() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try await box.cache("sync", "bank").status == 0)

        let unasked = try await box.cache("sources", "remove", "bank")
        #expect(unasked.status == 64)
        #expect(unasked.stderr.hasPrefix("cache: removing 'bank' deletes 7 cached rows and 2 sync runs; add --yes"), "\(unasked.stderr)")
        let kept = try await box.terminal(["sources", "remove", "bank"], answer: "n\n")
        #expect(kept.status == 0)
        #expect(kept.stdout.contains("Remove source 'bank' with 7 cached rows and 2 sync runs? [y/N]"), "\(kept.stdout)")
        #expect(kept.stdout.contains("Kept 'bank'."))
        #expect(try await box.cache("sources", "list", "--json").jsonArray().count == 1)
        let asked = try await box.terminal(["sources", "remove", "bank"], answer: "y\n")
        #expect(asked.status == 0 && asked.stdout.contains("Removed source 'bank' with 7 cached rows and 2 sync runs."), "\(asked.stdout)")

        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        #expect(try await box.cache("sync", "bank").status == 0)
        #expect(try await box.cache("history", "--json").jsonArray().map { $0["run"] as? Int } == [3])
        #expect(try await box.cache("diff", "bank", "--run", "1").status == 66)
        let removed = try await box.cache("sources", "remove", "bank", "--yes")
        #expect(removed.stderr == "Removed source 'bank' with 7 cached rows and 1 sync run.\n", "\(removed.stderr)")
    }

    @Test func colorIsAskedForOrRefused() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try addStaleBank(upstream, box)  // stale rows are drawn in colour
        let escape = "\u{1B}["
        #expect(!(try await box.cache("list", "bank", "--offline").stdout.contains(escape)))
        #expect(try await box.cache("list", "bank", "--offline", "--color", "always").stdout.contains(escape))
        #expect(try await box.cache("--color=always", "list", "bank", "--offline").stdout.contains(escape))
        let terminal = try await box.terminal(["list", "bank", "--offline"], environment: ["NO_COLOR": ""])
        #expect(terminal.stdout.contains(escape), "\(terminal.stdout.debugDescription)")
        #expect(!(try await box.terminal(["list", "bank", "--offline", "--color", "never"], environment: ["NO_COLOR": ""]).stdout.contains(escape)))
        let bad = try await box.cache("list", "bank", "--color", "sometimes")
        #expect(bad.status == 64 && bad.stderr.hasPrefix("cache: invalid value 'sometimes' for '--color': expected auto, always or never."))
    }
}
