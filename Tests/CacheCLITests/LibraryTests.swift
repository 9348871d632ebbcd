import Foundation
import OfflineCache
import Testing

/// The library as an app sees it: only its public surface (this file imports `OfflineCache`
/// without `@testable`), the same checks as the command line, and a preview that reads what a
/// screen shows.
@Suite(.gated) struct LibraryTests {
    /// The command-line options a `SourceSettings` stands for: each option's flag, from the
    /// library's own declarations.
    static func options(_ settings: SourceSettings) -> [String] {
        SourceOption.all.flatMap { option -> [String] in
            switch settings[option] {
            case .text(let text)?: [option.flag, text]
            case .list(let texts)?: texts.flatMap { [option.flag, $0] }
            case .on?: [option.flag]
            // (Settings keep typed values as their text: read back, they are `.text`.)
            case .duration?, .count?: []
            case nil: []
            }
        }
    }

    /// What the command line says first (after `cache: `), as the library's message reads.
    static func firstLine(_ result: RunResult) -> String {
        let line = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        return line.hasPrefix("cache: ") ? String(line.dropFirst("cache: ".count)) : line
    }

    /// The same sentence, as the command line prints it (its controls shown as escapes), but
    /// for the options, which the library names as settings (`.ttl`, not `--ttl`).
    static func same(_ said: String, _ error: any Error) -> Bool {
        let said = SourceOption.namingSettings(said)
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
        ("ok", "jokes", [.url: "not a url"]),
        ("ok", "jokes", [.url: "http://user:secret@127.0.0.1:9/j"]),
        ("ok", "jokes", [.url: "http:///j"]),
        ("ok", "jokes", [.url: "http://127.0.0.1:99999/j"]),
        ("ok", "jokes", [.url: "http://127.0.0.1:99999999999999999999/j"]),
        ("ok", "jokes", [.url: "ftp://127.0.0.1/j"]),
        ("ok", "jokes", [.ttl: "0"]),
        ("ok", "jokes", [.ttl: "1h30"]),
        ("ok", "jokes", [.mode: "sometimes"]),
        ("ok", "jokes", [.header: ["no colon"]]),
        ("ok", "jokes", [.header: ["X-Id: a\u{1}b"]]),
        ("ok", "jokes", [.tokenEnv: "NOT-A-NAME"]),
        ("ok", "jokes", [.maxBytes: "0"]),
        ("ok", "jokes", [.maxBytes: "99999999999999999999"]),
        ("ok", "jokes", [.caCert: "/nonexistent/ca.pem"]),
        ("ok", "jokes", [.maxDelete: "150%"]),
        ("ok", "jokes", [.alertAfter: "soon"]),
        ("ok", "jokes", [.key: "id"]),
        ("ok", "account", [.delimiter: ";"]),
        ("ok", "json", SourceSettings()),
        ("ok", "json", [.rows: "results", .key: "id"]),
        ("ok", "json", [.key: "a,,b"]),
        ("ok", "json", [.key: "id", .next: "next"]),
        ("ok", "json", [.key: "id", .next: "link", .nextParam: "cursor"]),
        ("ok", "json", [.key: "id", .maxPages: "0"]),
        ("ok", "json", [.key: "id", .delimiter: ";"]),
        ("ok", "csv", [.key: "id", .delimiter: "\""]),
        ("ok", "json", [.key: "id", .next: "page", .nextParam: "p", .firstPage: "-1"]),
        ("ok", "json", [.key: "id", .next: "last-key", .nextParam: "after"]),
        ("ok", "json", [.key: "id", .sinceParam: "since"]),
        ("ok", "jokes", [.oauthTokenURL: "http://127.0.0.1:9/token", .clientIDEnv: "ID"]),
        ("ok", "jokes", [.tokenEnv: "T", .oauthTokenURL: "http://127.0.0.1:9/token", .clientIDEnv: "ID", .clientSecretEnv: "S"]),
        // Accepted by both, and stored alike.
        ("ok", "json", [.ttl: "1h", .header: ["Accept: application/json"], .key: "id", .next: "link", .maxPages: "5"]),
        ("ok", "csv", [.key: "id,day", .delimiter: "tab"]),
        ("ok", "account", [.mode: "merge", .tokenEnv: "BANK_TOKEN", .maxBytes: "1000", .maxDelete: "20%", .alertAfter: "2h"]),
        ("ok", "json", [.key: "id", .next: "last-key", .nextParam: "after", .hasMore: "$.has_more", .sinceParam: "since", .cursorField: "updated_at", .lag: "5m", .fullEvery: "12h"]),
        ("ok", "jokes", [.oauthTokenURL: "http://127.0.0.1:9/token", .clientIDEnv: "ID", .clientSecretEnv: "S", .scope: "read"]),
    ] as [(String, String, SourceSettings)])
    func addingChecksAsTheCommandLineDoes(_ name: String, _ kind: String, _ settings: SourceSettings) async throws {
        var url = Self.url
        if case .text(let text)? = settings[.url] { url = text }
        var rest = settings
        rest[.url] = nil
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
        ("j", [.rows: "$.x"]),
        ("j", [.ttl: "0"]),
        ("items", [.key: "a,,b"]),
        ("items", [.delimiter: ";"]),
        ("nosuch", [.ttl: "1h"]),
        ("j", [.ttl: "30m", .header: ["X-Team: app"], .tokenEnv: "JOKES_TOKEN", .maxDelete: "5"]),
        ("j", [.noHeaders: true, .noToken: true]),
        ("items", [.url: "http://127.0.0.1:9/other", .rows: "$.data", .key: "id,kind", .next: "$.next", .nextParam: "after"]),
        ("items", [.next: "offset"]),
        ("items", [.sinceParam: "since", .cursorField: "updated_at", .lag: "0"]),
        ("j", [.noToken: true, .oauthTokenURL: "http://127.0.0.1:9/token", .clientIDEnv: "ID", .clientSecretEnv: "S"]),
        ("j", [.oauthTokenURL: "http://127.0.0.1:9/token", .clientIDEnv: "ID", .clientSecretEnv: "S"]),
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
        try cache.addSource(name: "items", kind: .json, url: "file://" + file, [.key: "id"])
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
        var states: [Cache.LoadingState] = []
        for await state in cache.states(of: "items", limit: 50) { states.append(state) }
        let elapsed = ContinuousClock.now - started
        guard case .preview(let rows, let stale)? = states.first else { Issue.record("no preview: \(states)"); return }
        #expect(rows.count == 50 && !stale && states.count == 1)
        #expect(try cache.rows(of: "items", limit: 50).count == 50)
        #expect(elapsed < .seconds(2), "\(elapsed)")
        print("a preview of 50 of 200,000 records: \(elapsed)")
    }

    /// A program is told the setting it passed, not a command-line flag.
    @Test func messagesNameSettingsNotFlags() throws {
        let box = try Sandbox()
        let cache = try Cache(path: box.database)
        #expect { try cache.addSource(name: "j", kind: .jokes, url: Self.url, [.ttl: "soon"]) } throws: { error in
            "\(error)".contains("'.ttl'") && !"\(error)".contains("--")
        }
        #expect { try cache.addSource(name: "r", kind: .json, url: Self.url) } throws: { error in
            "\(error)".contains(".key") && !"\(error)".contains("--")
        }
        #expect([SourceOption.tokenEnv, .oauthTokenURL, .clientIDEnv, .noCACert, .noOAuth, .maxDelete, .url].map(\.setting)
                == ["tokenEnv", "oauthTokenURL", "clientIDEnv", "noCACert", "noOAuth", "maxDelete", "url"])
    }

    /// Issue 56: at most 12 top-level public types and 40 in all, the rest nested under the type
    /// they belong to (`Source.Kind`, `CacheError.Upstream`, `Cache.LoadingState`), as swift-log
    /// nests under `Logger`; a declaration at column 0 is top-level. None of the engine's inner
    /// types is among them: an app sees what it needs.
    @Test func thePublicSurfaceIsSmall() throws {
        let root = URL(fileURLWithPath: Paths.repository + "/Sources/OfflineCache")
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }
        var names: [String] = [], topLevel: [String] = []
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: #/(?m)^(\s*)public\s+(?:(?:final|indirect)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+(\w+)/#) {
                names.append(String(match.2))
                if match.1.isEmpty { topLevel.append(String(match.2)) }
            }
        }
        print("public types: \(names.count): \(names.sorted().joined(separator: ", "))")
        print("top-level: \(topLevel.count): \(topLevel.sorted().joined(separator: ", "))")
        #expect(names.count <= 40, "\(names.count) public types")
        #expect(topLevel.count <= 12, "\(topLevel.count) top-level public types: \(topLevel.sorted())")
        #expect(topLevel.contains("Cache") && !topLevel.contains("SourceKind") && !topLevel.contains("CachedRows"))
        #expect(names.count > 10)
        for inner in ["Connection", "Statement", "PayloadDecoder", "RecordDecoder", "JSONCursor", "SyncEngine", "CacheDatabase"] {
            #expect(!names.contains(inner), "\(inner) is public")
        }
        // An app imports SwiftUI and Foundation beside it: none of their common names is taken,
        // at any depth (a nested `State` still shadows SwiftUI's inside an extension of its type).
        let taken = ["Transaction", "State", "Binding", "Data", "Date", "URL", "UUID", "View", "Text", "Image", "Color",
                     "Environment", "Animation", "Locale", "Calendar", "TimeZone", "Notification", "Decimal", "Progress",
                     "Bundle", "Published", "Scene", "App", "List", "Table", "Section", "Form", "Label", "Link", "Button",
                     "Menu", "Group", "Task", "Result", "Error"]
        #expect(Set(names).isDisjoint(with: taken), "named as SwiftUI or Foundation names a type: \(Set(names).intersection(taken).sorted())")
    }

    /// Issue 56: every call an app makes throws one type, `CacheError` (a `switch` over it is
    /// exhaustive), but the transport seam's, which throws the upstream's own errors.
    @Test func everyPublicCallThrowsCacheError() throws {
        let root = Paths.repository + "/Sources/OfflineCache/"
        let files = (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }
        var typed = 0, untyped: [String] = []
        for file in files {
            // A package type's members are not an app's to call, whatever they are marked.
            guard !file.hasPrefix("SQLite/") else { continue }
            let text = try String(contentsOfFile: root + file, encoding: .utf8)
            // Each public function or initializer's signature, up to its body, over its lines.
            for start in text.ranges(of: "public ") {
                let signature = text[start.lowerBound...].prefix { $0 != "{" }
                // A function, initializer or subscript, static or mutating or not.
                let head = signature.prefix { $0 != "(" }
                guard head.contains("func ") || head.hasSuffix("init") || head.contains("init?") || head.contains("subscript"),
                      signature.contains(" throws") || signature.contains(" rethrows") else { continue }
                if signature.contains("throws(CacheError)") {
                    typed += 1
                } else if !signature.contains("throws(CacheError.Upstream)") {
                    untyped.append("\(file): \(signature.split(separator: "\n").first ?? "")")
                }
            }
        }
        #expect(untyped.isEmpty, "\(untyped.joined(separator: "\n"))")
        #expect(typed >= 20, "\(typed)")
    }

    /// Issue 56: every call into the C library is made from one folder, `Platform/`, so a port
    /// to another system (an app's Apple platforms) changes those files alone: no other file of
    /// the library imports Glibc, and each of that folder's imports names where Darwin goes (a
    /// place to start a port, not a build for it: see `SystemError`).
    @Test func theCLibraryIsCalledFromOneFolder() throws {
        let root = Paths.repository + "/Sources/OfflineCache/"
        let files = (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }
        var importing: [String] = []
        for file in files {
            let text = try String(contentsOfFile: root + file, encoding: .utf8)
            guard text.contains("import Glibc") else { continue }
            importing.append(file)
            #expect(text.contains("#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Musl)\nimport Musl\n#elseif canImport(Darwin)\nimport Darwin\n#endif"),
                    "\(file) imports Glibc with no alternative for Musl (a static Linux build) and Darwin")
        }
        #expect(importing.count >= 5, "\(importing)")
        #expect(importing.allSatisfy { $0.hasPrefix("Platform/") }, "outside Platform/: \(importing.filter { !$0.hasPrefix("Platform/") })")
    }
}
