import Foundation
import Glibc
import Testing
@testable import CacheCLI

/// `cache sources export` and `cache apply`: a cache's sources as a file under version control,
/// and `${VAR}` in URLs and headers, which keeps values out of the database and the file.
@Suite(.gated) struct SourcesFileTests {
    /// docs/sources.md shows the file `sources export` writes for two sources, byte for byte
    /// (issue 54: the top level, `{"sources": [...]}`, was nowhere shown).
    @Test func theManualShowsTheFileExportWrites() throws {
        let box = try Sandbox()
        #expect(box.cacheInProcess(["sources", "add", "bank", "--kind", "account", "--url", "https://bank.example/api/account",
                                    "--ttl", "1h", "--token-env", "BANK_TOKEN"]).status == 0)
        #expect(box.cacheInProcess(["sources", "add", "shop", "--kind", "csv", "--url", "https://example.org/items.csv", "--key", "id"]).status == 0)
        let exported = box.cacheInProcess(["sources", "export"]).stdout
        let parts = Docs.text("docs/sources.md").components(separatedBy: "The file, as `sources export` writes it for two sources:\n\n```json\n")
        #expect(parts.count == 2 && parts.last?.components(separatedBy: "```")[0] == exported, "\(exported)")
    }

    static let canary = "canary-token-0f1e2d"

    /// An account source with a token variable and a header, a paged json source and a jokes source.
    static func threeSources(_ box: Sandbox, _ base: String = "http://127.0.0.1:9") throws {
        for arguments in [
            ["bank", "--kind", "account", "--url", base + "/account", "--token-env", "BANK_TOKEN", "--header", "X-Client: tests", "--ttl", "1h"],
            ["items", "--kind", "json", "--url", base + "/api/items?limit=50", "--key", "id", "--rows", "$.data",
             "--next", "last-key", "--next-param", "after", "--has-more", "$.has_more", "--max-delete", "20%"],
            ["jokes", "--kind", "jokes", "--url", base + "/jokes/ten"],
        ] {
            let added = box.cacheInProcess(["sources", "add"] + arguments)
            #expect(added.status == 0, "\(added.stderr)")
        }
    }

    /// The sources as `sources list --json` shows them.
    static func listed(_ box: Sandbox) throws -> [[String: Any]] {
        try box.cacheInProcess(["sources", "list", "--json"]).jsonArray()
    }

    static func actions(_ result: RunResult) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try result.jsonArray().map { ($0["source"] as? String ?? "", $0["action"] as? String ?? "") })
    }

    @Test func anExportAppliedToAnotherCacheMakesTheSameSources() throws {
        let first = try Sandbox()
        try Self.threeSources(first)
        let exported = first.cacheInProcess(["sources", "export"], environment: ["BANK_TOKEN": Self.canary])
        #expect(exported.status == 0, "\(exported.stderr)")
        // Stable: the same sources export to the same bytes; the token's value is in none of them.
        #expect(first.cacheInProcess(["sources", "export"]).stdout == exported.stdout)
        #expect(!exported.stdout.contains(Self.canary) && exported.stdout.contains("\"token-env\": \"BANK_TOKEN\""))
        #expect(exported.stdout.contains("\"has-more\": \"$.has_more\"") && exported.stdout.contains("\"header\": [\"X-Client: tests\"]"))
        #expect(!exported.stdout.contains("\"max-pages\""), "an option at its default is left out")
        let file = first.folder + "/sources.json"
        try Data(exported.stdout.utf8).write(to: URL(fileURLWithPath: file))

        let second = try Sandbox()
        let plan = second.cacheInProcess(["apply", file, "--plan", "--json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(try Self.actions(plan) == ["bank": "create", "items": "create", "jokes": "create"])
        #expect(!FileManager.default.fileExists(atPath: second.database), "a plan creates nothing")
        #expect(plan.stderr.contains("$BANK_TOKEN is not set here"), "\(plan.stderr)")

        let applied = second.cacheInProcess(["apply", file], environment: ["BANK_TOKEN": Self.canary])
        #expect(applied.status == 0 && !applied.stderr.contains("not set here"), "\(applied.stderr)")
        #expect(NSArray(array: try Self.listed(second)).isEqual(to: try Self.listed(first)))
        #expect(second.cacheInProcess(["sources", "export"]).stdout == exported.stdout)
        let again = second.cacheInProcess(["apply", file, "--json"])
        #expect(try Self.actions(again) == ["bank": "unchanged", "items": "unchanged", "jokes": "unchanged"])
        for suffix in ["", "-wal"] {
            let bytes = FileManager.default.contents(atPath: second.database + suffix) ?? Data()
            #expect(bytes.range(of: Data(Self.canary.utf8)) == nil)
        }
    }

    @Test func aChangedOptionIsOneChangeAndKeepsEveryRow() throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1}, {"id": 2}, {"id": 3}]"#)
        let file = box.folder + "/sources.json"
        let exported = box.cacheInProcess(["sources", "export"]).stdout
        try Data(exported.replacingOccurrences(of: "\"key\": \"id\"", with: "\"key\": \"id\",\n      \"ttl\": \"2h\"").utf8)
            .write(to: URL(fileURLWithPath: file))
        let changed = box.cacheInProcess(["apply", file, "--json"])
        #expect(changed.status == 0, "\(changed.stderr)")
        let step = try #require(try changed.jsonArray().first)
        #expect(step["action"] as? String == "change")
        #expect((step["changes"] as? [String: [String]]) == ["ttl": ["15m", "2h"]])
        #expect(try box.cacheInProcess(["list", "items", "--offline", "--json"]).jsonArray().count == 3)
        #expect(try Self.listed(box).first?["ttl_s"] as? Int == 7200)
        #expect(try box.cacheInProcess(["history", "items", "--json"]).jsonArray().count == 1, "the runs are kept")
    }

    @Test func aSourceLeftOutIsKeptUntilPrune() throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1}, {"id": 2}]"#)
        #expect(box.cacheInProcess(["sources", "add", "jokes", "--kind", "jokes", "--url", "http://127.0.0.1:9/j"]).status == 0)
        let file = box.folder + "/only-jokes.json"
        try Data(box.cacheInProcess(["sources", "export", "jokes"]).stdout.utf8).write(to: URL(fileURLWithPath: file))
        let kept = box.cacheInProcess(["apply", file])
        #expect(kept.status == 0 && kept.stdout.contains("items: kept: not in the file (--prune removes it)"), "\(kept.stdout)")
        #expect(try Self.listed(box).count == 2)
        let planned = box.cacheInProcess(["apply", file, "--prune", "--plan"])
        #expect(planned.stdout.contains("items: would be removed with 2 cached rows and 1 sync run"), "\(planned.stdout)")
        #expect(try Self.listed(box).count == 2)
        // Off a terminal, a removal needs --yes: refused, saying what would go, nothing changed.
        let unconfirmed = box.cacheInProcess(["apply", file, "--prune", "--json"])
        #expect(unconfirmed.status == 64 && unconfirmed.stdout.isEmpty, "\(unconfirmed.status): \(unconfirmed.stdout)")
        #expect(unconfirmed.stderr.contains("--prune would remove 1 source the file does not have: 'items' (2 cached rows and 1 sync run)")
                && unconfirmed.stderr.contains("add --yes"), "\(unconfirmed.stderr)")
        #expect(try Self.listed(box).count == 2)
        let pruned = box.cacheInProcess(["apply", file, "--prune", "--json", "-y"])
        #expect(try Self.actions(pruned) == ["items": "remove", "jokes": "unchanged"])
        #expect(try pruned.jsonArray().first?["rows"] as? Int == 2)
        #expect(try Self.listed(box).map { $0["name"] as? String } == ["jokes"])
    }

    /// Issue 55, item 1: `{"sources": [], "sources": [{…}]}` is a list of one source to jq,
    /// Python and JavaScript (the last wins); read first-wins, `apply --prune` removed it. Refused
    /// whole, before the cache is opened, with or without `--yes`.
    @Test func aFileNamingSourcesTwiceIsRefusedAndPrunesNothing() throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1}, {"id": 2}]"#)
        let entry = try #require(box.cacheInProcess(["sources", "export"]).stdout.split(separator: "[", maxSplits: 1).last?
            .split(separator: "]").dropLast().joined(separator: "]"))
        let file = box.folder + "/twice.json"
        try Data(#"{"sources": [], "sources": [\#(entry)]}"#.utf8).write(to: URL(fileURLWithPath: file))
        for extra in [[], ["--yes"], ["--plan"]] {
            let refused = box.cacheInProcess(["apply", file, "--prune"] + extra)
            #expect(refused.status == 64, "\(extra): \(refused.status) \(refused.stderr)")
            #expect(refused.stderr.contains(#"the top level: "sources" is named twice in one object"#), "\(refused.stderr)")
        }
        #expect(try Self.listed(box).map { $0["name"] as? String } == ["items"])
        #expect(try box.cacheInProcess(["list", "items", "--offline", "--json"]).jsonArray().count == 2)
    }

    /// Issue 55, item 6: a number, or a switch's boolean, is accepted as itself, as the command
    /// line takes its text; a byte-order mark in front is passed over.
    @Test func numbersAndBooleansAreTakenAsThemselves() throws {
        let box = try Sandbox()
        let file = box.folder + "/typed.json"
        let text = "\u{FEFF}" + #"{"sources": [{"name": "items", "kind": "json", "url": "http://127.0.0.1:9/i", "key": "id", "max-pages": 10, "ttl": "90s", "no-token": false}]}"#
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let applied = box.cacheInProcess(["apply", file])
        #expect(applied.status == 0, "\(applied.stderr)")
        let exported = box.cacheInProcess(["sources", "export"]).stdout
        #expect(exported.contains(#""max-pages": "10""#) && exported.contains(#""ttl": "90s""#), "\(exported)")
        try Data(exported.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try Self.actions(box.cacheInProcess(["apply", file, "--json"])) == ["items": "unchanged"])
    }

    /// Issue 55, item 8: what a shell hands over is read — a FIFO, a process substitution —
    /// and what cannot be a sources file is refused by what it is: a folder or a device (64), a
    /// file that is not there (66, as the exit table says), one past the size bound (64).
    @Test func whatCanBeReadIsReadAndTheRestIsNamed() async throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", #"[{"id": 1}]"#)
        let exported = box.cacheInProcess(["sources", "export"]).stdout
        let other = try Sandbox()

        let fifo = box.folder + "/sources.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(exported.utf8))
            try? handle?.close()
        }
        writer.start()
        let fromFIFO = other.cacheInProcess(["apply", fifo, "--plan", "--json"])
        #expect(fromFIFO.status == 0 && (try? Self.actions(fromFIFO)) == ["items": "create"], "\(fromFIFO.stderr)")

        // `cache apply <(cache sources export)`, as bash hands it over: a /dev/fd path to a pipe.
        let substituted = try await other.run("/bin/bash", ["-c", "'\(Paths.cacheBinary)' --db '\(other.database)' apply <('\(Paths.cacheBinary)' --db '\(box.database)' sources export)"])
        #expect(substituted.status == 0 && substituted.stderr.contains("Applied: 1 added."), "\(substituted.stderr)")

        let big = box.folder + "/big.json"
        try Data(("{\"sources\": [{\"name\": \"" + String(repeating: "x", count: 17 << 20) + "\"}]}").utf8).write(to: URL(fileURLWithPath: big))
        for (path, status, message) in [
            (box.folder, Int32(64), "\(box.folder) is a folder, not a sources file."),
            ("/dev/zero", 64, "/dev/zero is a device, not a sources file."),
            (box.folder + "/missing.json", 66, "cannot read \(box.folder)/missing.json: No such file or directory"),
            (big, 64, "\(big) is larger than 16 MiB"),
        ] {
            let refused = other.cacheInProcess(["apply", path])
            #expect(refused.status == status && refused.stderr.contains(message), "\(path): \(refused.status) \(refused.stderr)")
        }
    }

    /// A file with one mistake is refused whole, naming it: the good source beside it is not
    /// added, the one already there not changed.
    @Test(arguments: [
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "tll": "1h"}"#, 64, "unknown key 'tll' in source 'new'"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "ttl": "soon"}"#, 64, "invalid value 'soon' for '--ttl'"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "ttl": ["1h"]}"#, 64, "invalid value for 'ttl' in source 'new'"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "ttl": null}"#, 64, "invalid value for 'ttl' in source 'new'"),
        // Issue 55, item 1: of two values for one name, other tools read the last; refused.
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "url": "http://127.0.0.1:9/other"}"#, 64,
         #"sources[1]: "url" is named twice in one object"#),
        (#"{"name": "new", "name": "newer", "kind": "jokes", "url": "http://127.0.0.1:9/n"}"#, 64, #""name" is named twice"#),
        // Item 6: the file is RFC 8259 JSON, read by the same strict reader as the data.
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "ttl": "5m",}"#, 65, "is not JSON"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "ttl": 0x10}"#, 65, "is not JSON"),
        (#"{"kind": "jokes", "url": "http://127.0.0.1:9/n"}"#, 64, "source 2 has no \"name\""),
        (#"{"name": "new", "url": "http://127.0.0.1:9/n"}"#, 64, "source 'new' of"),
        (#"{"name": "new", "kind": "bank", "url": "http://127.0.0.1:9/n"}"#, 64, "invalid kind 'bank'"),
        (#"{"name": "good", "kind": "jokes", "url": "http://127.0.0.1:9/n"}"#, 64, "has two sources named 'good'"),
        (#"{"name": "kept", "kind": "json", "url": "http://127.0.0.1:9/n", "key": "id"}"#, 64, "'kept' is jokes in the cache and json in the file"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n", "no-token": true}"#, 64, "unknown key 'no-token'"),
        (#"{"name": "new", "kind": "jokes", "url": "http://127.0.0.1:9/n""#, 65, "is not JSON"),
    ])
    func aFileWithAMistakeIsRefusedWhole(_ entry: String, _ status: Int32, _ message: String) throws {
        let box = try Sandbox()
        #expect(box.cacheInProcess(["sources", "add", "kept", "--kind", "jokes", "--url", "http://127.0.0.1:9/k"]).status == 0)
        let before = try Self.listed(box)
        let file = box.folder + "/sources.json"
        let good = #"{"name": "good", "kind": "jokes", "url": "http://127.0.0.1:9/g"}"#
        try Data(#"{"sources": [\#(good), \#(entry)]}"#.utf8).write(to: URL(fileURLWithPath: file))
        let refused = box.cacheInProcess(["apply", file])
        #expect(refused.status == status, "\(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains(message), "\(refused.stderr)")
        #expect(NSArray(array: try Self.listed(box)).isEqual(to: before))
    }

    @Test func aURLVariableIsFilledAtEachFetchAndNeverStored() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let added = box.cacheInProcess(["sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/${API_PATH}",
                                        "--header", "X-Team: ${TEAM}"])
        #expect(added.status == 0, "\(added.stderr)")
        let unset = box.cacheInProcess(["sync", "jokes"], environment: ["TEAM": "app"])
        #expect(unset.status == 78 && unset.stderr.contains("the variable API_PATH, named as ${API_PATH}"), "\(unset.stderr)")
        #expect(try upstreamRequests(upstream, "/jokes/ten").isEmpty)
        let synced = box.cacheInProcess(["sync", "jokes"], environment: ["API_PATH": "jokes/ten", "TEAM": "app"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try upstreamRequests(upstream, "/jokes/ten").count == 1)
        #expect(try box.cacheInProcess(["list", "jokes", "--offline", "--json"]).jsonArray().count == 10)
        // The database and the export hold the template, never the value.
        let stored = try rows(box.database, "SELECT url || settings AS text FROM sources").first?["text"] ?? ""
        #expect(stored.contains("API_PATH") && stored.contains("${TEAM}") && !stored.contains("jokes/ten"), "\(stored)")
        let exported = box.cacheInProcess(["sources", "export"]).stdout
        #expect(exported.contains("\"url\": \"\(upstream.baseURL)/${API_PATH}\""), "\(exported)")
        #expect(box.cacheInProcess(["sources", "list"]).stdout.contains("/${API_PATH}"))
        // A value with a newline is refused, naming the variable; nothing is sent.
        let newline = box.cacheInProcess(["sync", "jokes"], environment: ["API_PATH": "jokes/ten\nX-Evil: 1", "TEAM": "app"])
        #expect(newline.status == 78 && newline.stderr.contains("API_PATH") && newline.stderr.contains("control character"), "\(newline.stderr)")
        #expect(try upstreamRequests(upstream, "/jokes/ten").count == 1)
        // A read from a shell without the variable serves the rows and starts no refresh.
        try age(box.database, by: 3600)
        let read = box.cacheInProcess(["list", "jokes"], environment: ["TEAM": "app"])
        #expect(read.status == 0 && read.stderr.contains("not refreshing: the variable API_PATH"), "\(read.stderr)")
        // `$${` is a literal `${`.
        #expect(box.cacheInProcess(["sources", "add", "lit", "--kind", "jokes", "--url", upstream.baseURL + "/a$${B}"]).status == 0)
        #expect(box.cacheInProcess(["sync", "lit"]).stderr.contains("not set") == false)
    }
}
