import Foundation
import Testing
@testable import OfflineCache

/// The engine's reconcile rules, with a canned fetcher at the network seam and a real SQLite file.
/// (The same paths over real HTTP are in CacheCLITests.)
@Suite(.computing) struct SyncEngineTests {
    struct CannedFetcher: Fetching {
        let body: String
        func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
            FetchResponse(status: 200, body: Data(body.utf8))
        }
    }

    final class Fixture {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)").path
        let database: CacheDatabase
        init() throws { database = try CacheDatabase(path: folder + "/db.sqlite3", create: true) }
        deinit { try? FileManager.default.removeItem(atPath: folder) }

        func sync(_ source: Source, _ body: String) -> SyncReport {
            SyncEngine(database: database, fetcher: CannedFetcher(body: body)).sync(source)
        }

        func count(_ sql: String) throws -> Int { Int(try database.connection.scalarInt(sql) ?? -1) }
    }

    static func jokes(_ ids: [Int], punchline: String = "P") -> String {
        "[" + ids.map { #"{"id": \#($0), "type": "t", "setup": "S\#($0)", "punchline": "\#(punchline)"}"# }.joined(separator: ",") + "]"
    }

    @Test func mergeNeverRemovesAndReplaceDoes() throws {
        let fixture = try Fixture()
        let merge = Source(name: "m", kind: .jokes, url: URL(string: "http://h/")!)
        // No removal guard here: this is about what replace does (RemovalGuardTests hold it).
        let replace = Source(name: "r", kind: .jokes, url: URL(string: "http://h/")!, mode: .replace, maxDelete: .percent(100))
        try SourceStore(fixture.database).add(merge)
        try SourceStore(fixture.database).add(replace)

        #expect(fixture.sync(merge, Self.jokes([1, 2, 3])).counts == ChangeCounts(inserted: 3))
        let second = fixture.sync(merge, Self.jokes([3, 4]))
        #expect(second.counts == ChangeCounts(inserted: 1))
        #expect(try fixture.count("SELECT count(*) FROM jokes WHERE source = 'm'") == 4)

        #expect(fixture.sync(replace, Self.jokes([1, 2, 3])).counts == ChangeCounts(inserted: 3))
        let replaced = fixture.sync(replace, Self.jokes([3, 4], punchline: "changed"))
        #expect(replaced.counts == ChangeCounts(inserted: 1, updated: 1, deleted: 2))
        #expect(try fixture.count("SELECT count(*) FROM jokes WHERE source = 'r'") == 2)
        #expect(fixture.sync(replace, Self.jokes([3, 4], punchline: "changed")).outcome == .unchanged)
    }

    @Test func aBadBodyWritesOnlyTheFailedRun() throws {
        let fixture = try Fixture()
        let source = Source(name: "m", kind: .jokes, url: URL(string: "http://h/")!)
        try SourceStore(fixture.database).add(source)
        _ = fixture.sync(source, Self.jokes([1, 2]))
        // The second joke is bad: the first must not be written either.
        let report = fixture.sync(source, #"[{"id": 7, "type": "t", "setup": "S", "punchline": "P"}, {"id": 8}]"#)
        #expect(report.outcome == .failed)
        #expect(try fixture.count("SELECT count(*) FROM jokes WHERE id = 7") == 0)
        #expect(try fixture.count("SELECT count(*) FROM sync_runs WHERE outcome = 'failed'") == 1)
    }

    /// A load into an empty cache writes 100 rows a statement with `INSERT OR FAIL`, which keeps
    /// the rows a failing statement wrote before it failed (and the batches before it): the
    /// sync's transaction must undo them all. A trigger of the test's own refuses the 250th row
    /// in key order, halfway through the third batch; in a load of 6,357 transactions, the
    /// 1,251st, in the second thousand, with the thread that prepares rows ahead running: it must
    /// stop, and the sync end. Whether that thread is then filling a buffer or waiting for room
    /// depends on the build's speed; `aPreparerWaitingForRoomStopsWhenTheLoadEnds` holds the second.
    @Test(arguments: [(SourceKind.account, 357), (.json, 357), (.account, 6_357)])
    func aLoadRefusedHalfwayThroughABatchLeavesNoneOfItsRows(kind: SourceKind, rows: Int) throws {
        let fixture = try Fixture()
        var source = Source(name: "s", kind: kind, url: URL(string: "http://h/")!)
        let table: String, refused: String, body: String
        let indices = 0..<rows
        let refusedIndex = String(format: "%04d", rows > 1_000 ? 1_250 : 249)
        if kind == .json {
            source.layout = RecordLayout(key: [JSONPath("id")!])
            // Keys sort as text, and all have four digits: the 250th is "k0249".
            (table, refused) = ("records", "NEW.key = 'k\(refusedIndex)'")
            body = "[" + indices.map { #"{"id": "k\#(String(format: "%04d", $0))", "n": \#($0)}"# }.joined(separator: ",") + "]"
        } else {
            // One date, vendors "V0000", "V0001" and on: key order is vendor order.
            (table, refused) = ("transactions", "NEW.vendor = 'V\(refusedIndex)'")
            let items = indices.map { #"{"type": 1, "vendor": "V\#(String(format: "%04d", $0))", "amount": 1.5, "date": "2026-11-20 08:00:00"}"# }
            body = #"{"status": 200, "message": "OK", "body": {"name": "A", "currentBalance": 1.5, "transactions": [\#(items.joined(separator: ","))]}}"#
        }
        try SourceStore(fixture.database).add(source)
        try fixture.database.connection.execute(
            "CREATE TRIGGER refuse_one BEFORE INSERT ON \(table) WHEN \(refused) BEGIN SELECT RAISE(FAIL, 'refused by the test'); END")

        let report = fixture.sync(source, body)
        #expect(report.outcome == .failed)
        #expect(report.errorText?.contains("refused by the test") == true, "\(report.errorText ?? "no error")")
        #expect(try fixture.count("SELECT count(*) FROM \(table)") == 0)
        #expect(try fixture.count("SELECT count(*) FROM loads") == 0)

        // Without the trigger the same body loads whole.
        try fixture.database.connection.execute("DROP TRIGGER refuse_one")
        #expect(fixture.sync(source, body).counts == ChangeCounts(inserted: indices.count))
        #expect(try fixture.count("SELECT count(*) FROM \(table)") == indices.count)
    }

    @Test func aMissingTokenVariableFailsBeforeAnyRequest() throws {
        let fixture = try Fixture()
        let source = Source(name: "m", kind: .jokes, url: URL(string: "http://h/")!, tokenEnv: "CACHE_TEST_UNSET_TOKEN")
        try SourceStore(fixture.database).add(source)
        let report = SyncEngine(database: fixture.database, fetcher: CannedFetcher(body: "[]"), environment: [:]).sync(source)
        guard case .upstream(.missingToken("CACHE_TEST_UNSET_TOKEN")) = report.failure else {
            Issue.record("expected a missing-token failure, got \(String(describing: report.failure))")
            return
        }
        let request = try SyncEngine(database: fixture.database, environment: ["CACHE_TEST_UNSET_TOKEN": "abc"])
            .fetchRequest(for: source, timeout: 5)
        #expect(request.headers.contains(Source.Header(name: "Authorization", value: "Bearer abc")))
    }
}
