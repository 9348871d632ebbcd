import Foundation
import OfflineCache
import Testing

/// The library as an app sees it: only its public surface (this file imports `OfflineCache`
/// without `@testable`), the same checks as the command line, and a preview that reads what a
/// screen shows.
@Suite(.gated) struct LibraryTests {
    /// Every source the command line refuses at `sources add` is refused by `Cache.addSource`
    /// with the same message (the command line's first line, after `cache: `).
    @Test(arguments: [
        ("bad name!", "jokes", "http://127.0.0.1:9/j", [String]()),
        ("a/b", "jokes", "http://127.0.0.1:9/j", []),
        ("ok", "jokes", "not a url", []),
        ("ok", "jokes", "http://user:secret@127.0.0.1:9/j", []),
        ("ok", "jokes", "http:///j", []),
        ("ok", "jokes", "http://127.0.0.1:99999/j", []),
        ("ok", "jokes", "http://127.0.0.1:99999999999999999999/j", []),
        ("ok", "jokes", "ftp://127.0.0.1/j", []),
        ("ok", "json", "http://127.0.0.1:9/items", []),
    ])
    func theLibraryRefusesWhatTheCommandLineRefuses(_ name: String, _ kind: String, _ url: String, _ extra: [String]) async throws {
        let box = try Sandbox()
        let command = try await box.cache(["sources", "add", name, "--kind", kind, "--url", url] + extra)
        #expect(command.status != 0)
        let said = try #require(command.stderr.split(separator: "\n").first.map(String.init))
        let cache = try Cache(path: box.database)
        do {
            try cache.addSource(name: name, kind: try #require(SourceKind(rawValue: kind)), url: url)
            Issue.record("the library accepted what the command line refused: \(said)")
        } catch {
            let message = "\(error)"
            #expect(said == "cache: " + message.prefix(1).lowercased() + message.dropFirst(), "command line: \(said); library: \(message)")
        }
        #expect(try cache.sources().isEmpty)
    }

    /// A 200,000-record source previewed with a limit of 50 reads 50 rows: fast, in little memory.
    @Test func aPreviewReadsWhatTheScreenShows() async throws {
        let box = try Sandbox()
        let file = box.folder + "/items.json"
        try Data(#"[{"id": 1, "name": "item 1", "price": 1.5}]"#.utf8).write(to: URL(fileURLWithPath: file))
        let cache = try Cache(path: box.database)
        try cache.addSource(name: "items", kind: .json, url: "file://" + file, key: ["id"])
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
