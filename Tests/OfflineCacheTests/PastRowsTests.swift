import Foundation
import Testing
@testable import OfflineCache

/// `list --as-of` with a limit reads about as many rows as it shows, however many rows the runs
/// since the moment changed: the work is counted in SQLite's virtual-machine steps, which a
/// loaded machine does not change. (What the rows are is held by HistoryTests.)
@Suite(.computing) struct PastRowsTests {
    static let rows = 3_000

    /// A source of `rows` rows; a moment; 2 in 3 of them changed; a later moment; all but 20 of
    /// those changed back. The two moments. The changed rows are spread through `list`'s order,
    /// as a re-sync's are: a page also skips the rows changed since the moment that come before
    /// it (the log brings them back).
    static func history(_ fixture: SyncEngineTests.Fixture, _ source: Source, body: (_ changed: (Int) -> Bool) -> String) async throws -> (early: String, late: String) {
        try SourceStore(fixture.database).add(source)
        #expect(fixture.sync(source, body { _ in false }).outcome == .updated)
        func moment() async throws -> String {
            try await Task.sleep(for: .milliseconds(5))
            let now = Timestamp.format(Date())
            try await Task.sleep(for: .milliseconds(5))
            return now
        }
        let early = try await moment()
        #expect(fixture.sync(source, body { $0 % 3 != 0 }).counts.updated == 2_000)
        let late = try await moment()
        #expect(fixture.sync(source, body { $0 % 150 == 1 }).counts.updated == 2_000 - 20)
        return (early, late)
    }

    /// The steps of `source`'s rows query with `limit` (nil: all; as of `moment`), and the rows
    /// as text.
    static func read(_ fixture: SyncEngineTests.Fixture, _ source: Source, asOf moment: String?, limit: Int?,
                     keyed: Bool = false, staleOnly: Bool = false) throws -> (steps: Int, rows: [String]) {
        let db = fixture.database.connection
        var selection = RowSelection(source: source.name, staleOnly: staleOnly, asOf: moment)
        selection.limit = limit
        selection.keyed = keyed
        let sql = try source.kind.storage.definition.rowsQuery(db, selection, asRecords: false)
        let statement = try db.cachedStatement(sql)
        defer { statement.reset() }
        let before = statement.virtualMachineSteps
        try statement.bind([.text(source.name), .int(Int64(limit ?? -1))])
        var rows: [String] = []
        while try statement.step() { rows.append((0..<statement.columnCount).map { statement.text($0) ?? "NULL" }.joined(separator: "|")) }
        return (statement.virtualMachineSteps - before, rows)
    }

    static func expectAPageReadsAboutAPage(_ fixture: SyncEngineTests.Fixture, _ source: Source, _ moments: (early: String, late: String)) throws {
        let now = try read(fixture, source, asOf: nil, limit: 50)
        let late = try read(fixture, source, asOf: moments.late, limit: 50)
        let early = try read(fixture, source, asOf: moments.early, limit: 50)
        // A page (read by lookups) is the whole list's (read by sets) first 50 rows.
        #expect(early.rows == Array(try read(fixture, source, asOf: moments.early, limit: nil).rows.prefix(50)))
        #expect(late.rows == Array(try read(fixture, source, asOf: moments.late, limit: nil).rows.prefix(50)))
        #expect(now.rows.count == 50 && early.rows.count == 50)
        // Since the early moment, runs changed rows 3,980 times; before the late one, 2,000;
        // since it, 1,980. A page as of either reads a few times what a page now does: the
        // moment's runs and horizon, and its rows' lookups (7 times for transactions, 6 for
        // records, with SQLite 3.40). Reading every change since the moment, and every change
        // before it, as it once did: 15 to 60 times.
        #expect(early.steps < now.steps * 10 && late.steps < now.steps * 10,
                "as of the early moment \(early.steps) steps, the late \(late.steps), now \(now.steps)")
        print("\(source.name): a page of 50 now \(now.steps) steps; as of the late moment \(late.steps); as of the early \(early.steps)")
    }

    @Test func aPageOfTransactionsAsOfAMomentReadsAboutAPage() async throws {
        let fixture = try SyncEngineTests.Fixture()
        let source = Source(name: "bank", kind: .account, url: URL(string: "http://h/")!, mode: .replace)
        let moments = try await Self.history(fixture, source) { changed in
            let items = (0..<Self.rows).map { index in
                let day = String(format: "2026-%02d-%02d 10:00:00", index % 12 + 1, index % 28 + 1)
                return #"{"type": 1, "vendor": "v\#(index % 97)", "amount": \#(changed(index) ? index + 1 : index), "date": "\#(day)"}"#
            }
            return #"{"status": 200, "message": "OK", "body": {"name": "A", "currentBalance": 1.5, "transactions": [\#(items.joined(separator: ","))]}}"#
        }
        try Self.expectAPageReadsAboutAPage(fixture, source, moments)
    }

    @Test func aPageOfRecordsAsOfAMomentReadsAboutAPage() async throws {
        let fixture = try SyncEngineTests.Fixture()
        var source = Source(name: "items", kind: .json, url: URL(string: "http://h/")!, mode: .replace)
        source.layout = RecordLayout(key: [JSONPath("id")!])
        let moments = try await Self.history(fixture, source) { changed in
            "[" + (0..<Self.rows).map { #"{"id": \#($0), "name": "\#(changed($0) ? "changed" : "item") \#($0)"}"# }.joined(separator: ",") + "]"
        }
        try Self.expectAPageReadsAboutAPage(fixture, source, moments)
    }

    /// A page is read by lookups and a whole list by sets: the two must agree on every history.
    /// Seeded series of syncs of two sources of one storage with the same row ids, one replacing
    /// and one merging (rows coming, changing, going, the source emptied and loaded again, its
    /// URL changed so nothing is confirmed); at every moment between them, the first 1, 7 and
    /// 50 rows of a page are the whole list's, in `list`'s order, in the page key's, and stale
    /// ones alone. Transactions tie often (few dates and vendors).
    @Test(arguments: [SourceKind.jokes, .json, .account])
    func aPageIsTheWholeListsFirstRowsAtEveryMoment(kind: SourceKind) async throws {
        let fixture = try SyncEngineTests.Fixture()
        var sources: [Source] = []
        for (name, mode) in [("r", SyncMode.replace), ("m", .merge)] {
            var source = Source(name: name, kind: kind, url: URL(string: "http://h/")!, mode: mode, maxDelete: .percent(100))
            if kind == .json { source.layout = RecordLayout(key: [JSONPath("id")!]) }
            try SourceStore(fixture.database).add(source)
            sources.append(source)
        }
        var generator = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["CACHE_TEST_SEED"] ?? "") ?? 20261202)
        var moments: [String] = []
        func moment() async throws {
            try await Task.sleep(for: .milliseconds(3))
            moments.append(Timestamp.format(Date()))
            try await Task.sleep(for: .milliseconds(3))
        }
        for step in 0..<10 {
            // Every third sync after the first few empties the source, so the next is a load.
            let ids = step % 3 == 2 ? [] : (0..<60).filter { _ in Int.random(in: 0..<3, using: &generator) > 0 }
            let values = ids.map { ($0, Int.random(in: 0..<4, using: &generator)) }
            let body: String
            switch kind {
            case .jokes:
                body = "[" + values.map { #"{"id": \#($0.0), "type": "t", "setup": "S\#($0.0)", "punchline": "P\#($0.1)"}"# }.joined(separator: ",") + "]"
            case .account:
                let items = values.map { #"{"type": 1, "vendor": "v\#($0.0 % 3)", "amount": \#($0.1), "date": "2026-11-\#(10 + $0.0 % 2) 10:00:00"}"# }
                body = #"{"status": 200, "message": "OK", "body": {"name": "A", "currentBalance": 1.5, "transactions": [\#(items.joined(separator: ","))]}}"#
            default:
                body = "[" + values.map { #"{"id": "k\#($0.0)", "v": \#($0.1)}"# }.joined(separator: ",") + "]"
            }
            for source in sources {
                let report = fixture.sync(source, body)
                #expect(report.failure == nil, "\(String(describing: report.failure))")
            }
            try await moment()
            if step % 4 == 1 {
                for source in sources { _ = try SourceStore(fixture.database).update(source.name) { $0.url = URL(string: "http://h/\(step)")! } }
                try await moment()
            }
        }
        var rowsSeen = 0, staleSeen = 0
        for source in sources {
            for moment in moments {
                rowsSeen += try Self.read(fixture, source, asOf: moment, limit: nil).rows.count
                for (keyed, staleOnly) in [(false, false), (true, false), (false, true)] {
                    let whole = try Self.read(fixture, source, asOf: moment, limit: nil, keyed: keyed, staleOnly: staleOnly).rows
                    if staleOnly { staleSeen += whole.count }
                    for limit in [1, 7, 50] {
                        let page = try Self.read(fixture, source, asOf: moment, limit: limit, keyed: keyed, staleOnly: staleOnly).rows
                        #expect(page == Array(whole.prefix(limit)),
                                "\(kind) \(source.name) as of \(moment), limit \(limit), keyed \(keyed), stale only \(staleOnly)")
                    }
                }
            }
        }
        #expect(rowsSeen > 400 && staleSeen > 40, "the moments had \(rowsSeen) rows in all, \(staleSeen) stale")
    }
}
