import Foundation
import Testing
@testable import OfflineCache

/// The transactions' reconcile (a merge join in table order) held to a plain model. Seeded
/// series of responses — sorted, reversed and shuffled, with repeats of one date and vendor,
/// vendors that differ only in bytes or case, and empty responses — must leave exactly the
/// rows, ids, counts and change log the model predicts.
@Suite(.computing) struct TransactionReconcileTests {
    /// A row as the model keys it: the vendor as bytes, as SQLite compares text (Swift's String
    /// equality would take "é" and "e\u{301}" for one vendor).
    struct Key: Hashable {
        let date: String
        let vendor: [UInt8]
        let ordinal: Int
    }

    struct Value: Equatable {
        let type: Int
        let amount: Double
    }

    struct Row {
        let date: String  // upstream's form
        let vendor: String
        let type: Int
        let amount: Double
    }

    static let vendors = ["Rent", "Uber", "uber", "\u{E9}clair", "e\u{301}clair", "Zed", "", "Ünï ☕"]
    /// Few dates, so repeats of a date and vendor are common.
    static let dates = ["2026-11-20 08:00:00", "2026-11-20 08:00:01", "2026-11-21 23:59:59", "2025-01-01 00:00:00"]

    static func body(_ rows: [Row]) -> String {
        let items = rows.map { #"{"type": \#($0.type), "vendor": "\#($0.vendor)", "amount": \#($0.amount), "date": "\#($0.date)"}"# }
        return #"{"status": 200, "message": "OK", "body": {"name": "A", "currentBalance": 1.5, "transactions": [\#(items.joined(separator: ", "))]}}"#
    }

    /// The response keyed as the cache must store it: ordinals count repeats in response order.
    static func keyed(_ rows: [Row]) -> [Key: Value] {
        var seen: [[UInt8]: Int] = [:]
        var result: [Key: Value] = [:]
        for row in rows {
            let date = PayloadDecoder.isoDate(fromUpstream: row.date)!
            let repeatKey = Array(date.utf8) + [0] + Array(row.vendor.utf8)
            let ordinal = seen[repeatKey, default: 0]
            seen[repeatKey] = ordinal + 1
            result[Key(date: date, vendor: Array(row.vendor.utf8), ordinal: ordinal)] = Value(type: row.type, amount: row.amount)
        }
        return result
    }

    @Test(arguments: [SyncMode.replace, .merge])
    func seededSeriesOfSyncsLeaveWhatTheModelPredicts(mode: SyncMode) throws {
        let fixture = try SyncEngineTests.Fixture()
        // No removal guard: the model predicts the reconcile alone (RemovalGuardTests hold it).
        let source = Source(name: "bank", kind: .account, url: URL(string: "http://h/")!, mode: mode, maxDelete: .percent(100))
        try SourceStore(fixture.database).add(source)
        var generator = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["CACHE_TEST_SEED"] ?? "") ?? 20261130)
        var model: [Key: Value] = [:]

        for round in 0..<40 {
            var rows = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                Row(date: Self.dates.randomElement(using: &generator)!, vendor: Self.vendors.randomElement(using: &generator)!,
                    type: Int.random(in: 0...1, using: &generator), amount: [1.5, 2.25, 10].randomElement(using: &generator)!)
            }
            switch round % 3 {
            case 0: rows.sort { $0.date != $1.date ? $0.date < $1.date : Array($0.vendor.utf8).lexicographicallyPrecedes($1.vendor.utf8) }
            case 1: rows.reverse()
            default: rows.shuffle(using: &generator)
            }
            if round % 10 == 9 { rows = [] }  // a replace source then empties, and the next sync is a load

            let response = Self.keyed(rows)
            var expected = ChangeCounts()
            expected.inserted = response.keys.filter { model[$0] == nil }.count
            expected.updated = response.filter { key, value in model[key].map { $0 != value } ?? false }.count
            if mode == .replace {
                expected.deleted = model.keys.filter { response[$0] == nil }.count
                model = response
            } else {
                model.merge(response) { _, new in new }
            }
            let wasEmpty = try fixture.count("SELECT count(*) FROM transactions") == 0

            let report = fixture.sync(source, Self.body(rows))
            #expect(report.counts == expected, "round \(round)")

            let stored = try fixture.database.connection.query("SELECT date, vendor, ordinal, type, amount, id FROM transactions") { row in
                (Key(date: row.text(0)!, vendor: Array(row.text(1)!.utf8), ordinal: row.int(2)), Value(type: row.int(3), amount: row.double(4)), row.text(5)!)
            }
            #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.0, $0.1) }) == model, "round \(round)")
            for (key, _, id) in stored {
                let expectedID = TransactionID.make(source: "bank", date: TransactionDate(iso: key.date)!,
                                                    vendor: String(decoding: key.vendor, as: UTF8.self), ordinal: key.ordinal)
                #expect(id == expectedID, "round \(round)")
            }

            // Each change is logged, or, into an empty cache, the load is.
            let runID = try fixture.count("SELECT max(id) FROM sync_runs")
            let logged = try fixture.count("SELECT count(*) FROM changes WHERE run_id = \(runID) AND row_kind = 'transaction'")
            let loaded = try fixture.count("SELECT coalesce(sum(rows), 0) FROM loads WHERE run_id = \(runID)")
            if wasEmpty {
                #expect(logged == 0 && loaded == expected.inserted, "round \(round)")
            } else {
                #expect(logged == expected.inserted + expected.updated + expected.deleted && loaded == 0, "round \(round)")
            }
        }
    }

    @Test func aLoadWrittenInBatchesHoldsEveryRowWithItsId() throws {
        let fixture = try SyncEngineTests.Fixture()
        let source = Source(name: "bank", kind: .account, url: URL(string: "http://h/")!)
        try SourceStore(fixture.database).add(source)
        var generator = SplitMix64(seed: 7)
        // Rows prepared ahead a thousand at a time, in four buffers taken in turn: seven such
        // chunks (the last of three batches) and a tail of 57 inserted one by one, shuffled,
        // with repeats; long vendors outgrow the text a buffer starts with.
        let vendors = Self.vendors + [String(repeating: "A vendor with a long name ", count: 12)]
        let rows = (0..<(6_000 + 3 * 100 + 57)).map { index in
            Row(date: Self.dates[index % Self.dates.count], vendor: vendors.randomElement(using: &generator)!,
                type: index % 2, amount: Double(index))
        }.shuffled(using: &generator)
        #expect(fixture.sync(source, Self.body(rows)).counts == ChangeCounts(inserted: rows.count))
        let stored = try fixture.database.connection.query("SELECT date, vendor, ordinal, type, amount, id FROM transactions") { row in
            (Key(date: row.text(0)!, vendor: Array(row.text(1)!.utf8), ordinal: row.int(2)), Value(type: row.int(3), amount: row.double(4)), row.text(5)!)
        }
        #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.0, $0.1) }) == Self.keyed(rows))
        #expect(stored.allSatisfy { key, _, id in
            id == TransactionID.make(source: "bank", date: TransactionDate(iso: key.date)!,
                                     vendor: String(decoding: key.vendor, as: UTF8.self), ordinal: key.ordinal)
        })
    }

    /// The thread that prepares a load's rows ahead fills every buffer it has, then waits for
    /// SQLite to take one. A load that ends there (a row refused, say) must stop it: the load
    /// waits for that thread before it returns, so a preparer that kept waiting would hang the sync.
    @Test func aPreparerWaitingForRoomStopsWhenTheLoadEnds() throws {
        let count = (TransactionLoad.chunksAhead + 2) * TransactionLoad.rowsPerChunk
        let items = (0..<count).map { UpstreamTransaction(type: 1, vendor: "V\($0)", amount: 1.5, date: "2026-11-20T08:00:00Z") }
        let order = (0..<count).map { Reconciler.Keyed(index: Int32($0), ordinal: 0) }
        let handover = PreparedRowsHandover(items: items, order: order[...], source: "bank")
        let preparer = JoinedThread { handover.prepareAll() }
        let joined = Condition()
        nonisolated(unsafe) var ended = false
        detachThread {
            preparer.join()
            joined.lock(); ended = true; joined.broadcast(); joined.unlock()
        }
        func holds(within seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if condition() { return true }
                sleepSeconds(0.01)
            }
            return condition()
        }
        // Every buffer filled and none taken: it waits for room.
        #expect(holds(within: 30) { handover.preparedCount == TransactionLoad.chunksAhead })
        #expect(!holds(within: 0.2) { handover.preparedCount > TransactionLoad.chunksAhead })
        #expect(!holds(within: 0) { joined.lock(); defer { joined.unlock() }; return ended })

        handover.cancel()
        #expect(holds(within: 30) { joined.lock(); defer { joined.unlock() }; return ended }, "the preparer still waits after the load ended")
        #expect(handover.preparedCount == TransactionLoad.chunksAhead)
    }

    @Test func theSameRowsInAnotherOrderChangeNothing() throws {
        let fixture = try SyncEngineTests.Fixture()
        let source = Source(name: "bank", kind: .account, url: URL(string: "http://h/")!)
        try SourceStore(fixture.database).add(source)
        let rows = Self.dates.flatMap { date in Self.vendors.map { Row(date: date, vendor: $0, type: 1, amount: 2.25) } }
        #expect(fixture.sync(source, Self.body(rows)).counts == ChangeCounts(inserted: rows.count))
        let ids = try fixture.database.connection.query("SELECT id FROM transactions ORDER BY id") { $0.text(0)! }
        let report = fixture.sync(source, Self.body(rows.reversed()))
        #expect(report.outcome == .unchanged && report.counts == ChangeCounts())
        #expect(try fixture.database.connection.query("SELECT id FROM transactions ORDER BY id") { $0.text(0)! } == ids)
    }
}
