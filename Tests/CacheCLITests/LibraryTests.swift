import Foundation
import OfflineCache
import Testing

/// The library as an app sees it: only its public surface (this file imports `OfflineCache`
/// without `@testable`), the same checks as the command line, and a preview that reads what a
/// screen shows.
@Suite(.gated) struct LibraryTests {
    /// The command-line options a `SourceSettings` stands for.
    static func options(_ settings: SourceSettings) -> [String] {
        var arguments: [String] = []
        func add(_ option: String, _ value: String?) { if let value { arguments += [option, value] } }
        add("--url", settings.url)
        add("--ttl", settings.ttl)
        add("--mode", settings.mode)
        if let headers = settings.headers {
            arguments += headers.isEmpty ? ["--no-headers"] : headers.flatMap { ["--header", $0] }
        }
        add("--token-env", settings.tokenEnv)
        if settings.noToken { arguments.append("--no-token") }
        add("--oauth-token-url", settings.oauthTokenURL)
        add("--client-id-env", settings.clientIDEnv)
        add("--client-secret-env", settings.clientSecretEnv)
        add("--scope", settings.scope)
        if settings.noOAuth { arguments.append("--no-oauth") }
        add("--max-bytes", settings.maxBytes)
        add("--ca-cert", settings.caCert)
        if settings.noCACert { arguments.append("--no-ca-cert") }
        add("--max-delete", settings.maxDelete)
        add("--alert-after", settings.alertAfter)
        add("--rows", settings.rows)
        add("--key", settings.key)
        add("--next", settings.next)
        add("--next-param", settings.nextParam)
        add("--first-page", settings.firstPage)
        add("--has-more", settings.hasMore)
        add("--max-pages", settings.maxPages)
        add("--since-param", settings.sinceParam)
        add("--cursor-field", settings.cursorField)
        add("--lag", settings.lag)
        add("--full-every", settings.fullEvery)
        if settings.noIncremental { arguments.append("--no-incremental") }
        add("--delimiter", settings.delimiter)
        return arguments
    }

    /// What the command line says first (after `cache: `), as the library's message reads.
    static func firstLine(_ result: RunResult) -> String {
        let line = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        return line.hasPrefix("cache: ") ? String(line.dropFirst("cache: ".count)) : line
    }

    /// The same sentence, as the command line prints it (its controls shown as escapes).
    static func same(_ said: String, _ error: any Error) -> Bool {
        let message = "\(error)"
        let escaped = (message.prefix(1).lowercased() + message.dropFirst()).unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return said == escaped
    }

    static let url = "http://127.0.0.1:9/data"

    /// Every source the command line refuses at `sources add`, `Cache.addSource` refuses with
    /// the same message; what one accepts, the other stores the same way.
    @Test(arguments: [
        ("bad name!", "jokes", SourceSettings()),
        ("a/b", "jokes", SourceSettings()),
        ("ok", "jokes", SourceSettings(url: "not a url")),
        ("ok", "jokes", SourceSettings(url: "http://user:secret@127.0.0.1:9/j")),
        ("ok", "jokes", SourceSettings(url: "http:///j")),
        ("ok", "jokes", SourceSettings(url: "http://127.0.0.1:99999/j")),
        ("ok", "jokes", SourceSettings(url: "http://127.0.0.1:99999999999999999999/j")),
        ("ok", "jokes", SourceSettings(url: "ftp://127.0.0.1/j")),
        ("ok", "jokes", SourceSettings(ttl: "0")),
        ("ok", "jokes", SourceSettings(ttl: "1h30")),
        ("ok", "jokes", SourceSettings(mode: "sometimes")),
        ("ok", "jokes", SourceSettings(headers: ["no colon"])),
        ("ok", "jokes", SourceSettings(headers: ["X-Id: a\u{1}b"])),
        ("ok", "jokes", SourceSettings(tokenEnv: "NOT-A-NAME")),
        ("ok", "jokes", SourceSettings(maxBytes: "0")),
        ("ok", "jokes", SourceSettings(maxBytes: "99999999999999999999")),
        ("ok", "jokes", SourceSettings(caCert: "/nonexistent/ca.pem")),
        ("ok", "jokes", SourceSettings(maxDelete: "150%")),
        ("ok", "jokes", SourceSettings(alertAfter: "soon")),
        ("ok", "jokes", SourceSettings(key: "id")),
        ("ok", "account", SourceSettings(delimiter: ";")),
        ("ok", "json", SourceSettings()),
        ("ok", "json", SourceSettings(rows: "results", key: "id")),
        ("ok", "json", SourceSettings(key: "a,,b")),
        ("ok", "json", SourceSettings(key: "id", next: "next")),
        ("ok", "json", SourceSettings(key: "id", next: "link", nextParam: "cursor")),
        ("ok", "json", SourceSettings(key: "id", maxPages: "0")),
        ("ok", "json", SourceSettings(key: "id", delimiter: ";")),
        ("ok", "csv", SourceSettings(key: "id", delimiter: "\"")),
        ("ok", "json", SourceSettings(key: "id", next: "page", nextParam: "p", firstPage: "-1")),
        ("ok", "json", SourceSettings(key: "id", next: "last-key", nextParam: "after")),
        ("ok", "json", SourceSettings(key: "id", sinceParam: "since")),
        ("ok", "jokes", SourceSettings(oauthTokenURL: "http://127.0.0.1:9/token", clientIDEnv: "ID")),
        ("ok", "jokes", SourceSettings(tokenEnv: "T", oauthTokenURL: "http://127.0.0.1:9/token", clientIDEnv: "ID", clientSecretEnv: "S")),
        // Accepted by both, and stored alike.
        ("ok", "json", SourceSettings(ttl: "1h", headers: ["Accept: application/json"], key: "id", next: "link", maxPages: "5")),
        ("ok", "csv", SourceSettings(key: "id,day", delimiter: "tab")),
        ("ok", "account", SourceSettings(mode: "merge", tokenEnv: "BANK_TOKEN", maxBytes: "1000", maxDelete: "20%", alertAfter: "2h")),
        ("ok", "json", SourceSettings(key: "id", next: "last-key", nextParam: "after", hasMore: "$.has_more", sinceParam: "since",
                                      cursorField: "updated_at", lag: "5m", fullEvery: "12h")),
        ("ok", "jokes", SourceSettings(oauthTokenURL: "http://127.0.0.1:9/token", clientIDEnv: "ID", clientSecretEnv: "S", scope: "read")),
    ] as [(String, String, SourceSettings)])
    func addingChecksAsTheCommandLineDoes(_ name: String, _ kind: String, _ settings: SourceSettings) async throws {
        let url = settings.url ?? Self.url
        var rest = settings
        rest.url = nil
        let command = try Sandbox()
        let said = command.cacheInProcess(["sources", "add", name, "--kind", kind, "--url", url] + Self.options(rest))
        let app = try Sandbox()
        let cache = try Cache(path: app.database)
        do {
            try cache.addSource(name: name, kind: try #require(SourceKind(rawValue: kind)), url: url, rest)
            #expect(said.status == 0, "the library accepted what the command line refused: \(said.stderr)")
            let listed = { (box: Sandbox) in box.cacheInProcess(["sources", "list", "--json"]).stdout }
            #expect(listed(app) == listed(command))
        } catch {
            #expect(said.status != 0, "the command line accepted what the library refused: \(error)")
            #expect(Self.same(Self.firstLine(said), error), "command line: \(said.stderr); library: \(error)")
            #expect(try cache.sources().isEmpty)
        }
    }

    /// `Cache.setSource` checks and changes as `cache sources set` does.
    @Test(arguments: [
        ("j", SourceSettings()),
        ("j", SourceSettings(rows: "$.x")),
        ("j", SourceSettings(ttl: "0")),
        ("items", SourceSettings(key: "a,,b")),
        ("items", SourceSettings(delimiter: ";")),
        ("nosuch", SourceSettings(ttl: "1h")),
        ("j", SourceSettings(ttl: "30m", headers: ["X-Team: app"], tokenEnv: "JOKES_TOKEN", maxDelete: "5")),
        ("j", SourceSettings(headers: [], noToken: true)),
        ("items", SourceSettings(url: "http://127.0.0.1:9/other", rows: "$.data", key: "id,kind", next: "$.next", nextParam: "after")),
        ("items", SourceSettings(next: "offset")),
        ("items", SourceSettings(sinceParam: "since", cursorField: "updated_at", lag: "0")),
        ("j", SourceSettings(noToken: true, oauthTokenURL: "http://127.0.0.1:9/token", clientIDEnv: "ID", clientSecretEnv: "S")),
        ("j", SourceSettings(oauthTokenURL: "http://127.0.0.1:9/token", clientIDEnv: "ID", clientSecretEnv: "S")),
    ] as [(String, SourceSettings)])
    func settingChecksAsTheCommandLineDoes(_ name: String, _ settings: SourceSettings) async throws {
        let command = try Sandbox(), app = try Sandbox()
        for box in [command, app] {
            #expect(box.cacheInProcess(["sources", "add", "j", "--kind", "jokes", "--url", Self.url, "--token-env", "T", "--header", "A: b"]).status == 0)
            #expect(box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--url", Self.url, "--key", "id"]).status == 0)
        }
        let said = command.cacheInProcess(["sources", "set", name] + Self.options(settings))
        let cache = try Cache(path: app.database)
        let listed = { (box: Sandbox) in box.cacheInProcess(["sources", "list", "--json"]).stdout }
        do {
            let changed = try cache.setSource(named: name, settings)
            #expect(said.status == 0, "the library accepted what the command line refused: \(said.stderr)")
            #expect(try cache.sources().first { $0.name == name } == changed)
        } catch {
            #expect(said.status != 0, "the command line accepted what the library refused: \(error)")
            #expect(Self.same(Self.firstLine(said), error), "command line: \(said.stderr); library: \(error)")
        }
        #expect(listed(app) == listed(command))
    }

    /// A 200,000-record source previewed with a limit of 50 reads 50 rows: fast, in little memory.
    @Test func aPreviewReadsWhatTheScreenShows() async throws {
        let box = try Sandbox()
        let file = box.folder + "/items.json"
        try Data(#"[{"id": 1, "name": "item 1", "price": 1.5}]"#.utf8).write(to: URL(fileURLWithPath: file))
        let cache = try Cache(path: box.database)
        try cache.addSource(name: "items", kind: .json, url: "file://" + file, SourceSettings(key: "id"))
        #expect(try cache.sync("items").outcome == .updated)
        // 199,999 more records as a sync would store them, written by SQLite itself (a sync of
        // 200,000 takes seconds in a debug build, and the preview is what this test measures).
        let more = try await box.run("/usr/bin/env", ["sqlite3", box.database, """
            WITH RECURSIVE n(id) AS (SELECT 2 UNION ALL SELECT id + 1 FROM n WHERE id < 200000)
            INSERT INTO records (source, key, record, seen_at)
            SELECT 'items', id, json_object('id', id, 'name', 'item ' || id, 'price', id % 1000 + 0.5), strftime('%Y-%m-%dT%H:%M:%fZ') FROM n
            """])
        #expect(more.status == 0, "\(more.stderr)")
        #expect(try cache.status().first?.rows == 200_000)
        let started = ContinuousClock.now
        var states: [LoadingState] = []
        for await state in cache.states(of: "items", limit: 50) { states.append(state) }
        let elapsed = ContinuousClock.now - started
        guard case .preview(let rows, let stale)? = states.first else { Issue.record("no preview: \(states)"); return }
        #expect(rows.count == 50 && !stale && states.count == 1)
        #expect(try cache.rows(of: "items", limit: 50).count == 50)
        #expect(elapsed < .seconds(2), "\(elapsed)")
        print("a preview of 50 of 200,000 records: \(elapsed)")
    }

    /// At most 40 public types, and none of the engine's inner ones: an app sees what it needs.
    @Test func thePublicSurfaceIsSmall() throws {
        let root = URL(fileURLWithPath: Paths.repository + "/Sources/OfflineCache")
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }
        var names: [String] = []
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: #/(?m)^\s*public\s+(?:final\s+)?(?:struct|enum|class|protocol|actor|typealias)\s+(\w+)/#) {
                names.append(String(match.1))
            }
        }
        print("public types: \(names.count): \(names.sorted().joined(separator: ", "))")
        #expect(names.count <= 40, "\(names.count) public types")
        #expect(names.count > 10)
        for inner in ["Connection", "Statement", "PayloadDecoder", "RecordDecoder", "JSONCursor", "SyncEngine", "CacheDatabase"] {
            #expect(!names.contains(inner), "\(inner) is public")
        }
    }
}
