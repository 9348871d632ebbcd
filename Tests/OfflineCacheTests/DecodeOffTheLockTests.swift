import CSQLite
import Foundation
import Testing
@testable import OfflineCache

/// A body is decoded and validated before the write transaction starts, under the sync's
/// deadline, and in time linear in its size: a slow decode holds no lock.
@Suite(.computing) struct DecodeOffTheLockTests {
    /// Returns its body, and says when it did: the decode starts right after.
    final class SignallingFetcher: Fetching, @unchecked Sendable {
        let body: Data
        let fetched = DispatchSemaphore(value: 0)
        init(_ body: Data) { self.body = body }
        func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
            fetched.signal()
            return FetchResponse(status: 200, body: body)
        }
    }

    /// One joke whose object also holds `keys` other keys (`"key_0":12,"key_1":12,…`).
    static func jokeWithKeys(_ keys: Int) -> Data {
        var text = #"{"id": 1, "type": "general", "setup": "S", "punchline": "P""#
        text.reserveCapacity(keys * 18)
        for key in 0..<keys { text += ",\"field_\(key)\": 12" }
        return Data((text + "}").utf8)
    }

    static func fixture() throws -> (folder: String, database: CacheDatabase) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("decode-\(UUID().uuidString)").path
        return (folder, try CacheDatabase(path: folder + "/db.sqlite3", create: true))
    }

    @Test func anObjectOf160000KeysSyncsInSeconds() throws {
        let (folder, database) = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let body = Self.jokeWithKeys(160_000)
        #expect(body.count > 2_700_000)
        let source = Source(name: "wide", kind: .jokes, url: URL(string: "http://h/")!)
        try SourceStore(database).add(source)

        let started = ContinuousClock.now
        let report = SyncEngine(database: database, fetcher: SignallingFetcher(body)).sync(source)
        let elapsed = ContinuousClock.now - started
        #expect(report.outcome == .updated, "\(String(describing: report.failure))")
        #expect(try database.connection.scalarInt("SELECT count(*) FROM jokes WHERE source = 'wide'") == 1)
        // It took 26 s when every key was compared with every earlier one; linear, it takes a
        // fraction of a second (a debug build on a loaded 2-core machine included).
        #expect(elapsed < .seconds(10), "\(elapsed)")
        print("a jokes body of \(body.count) bytes, one object of 160,000 keys, synced in \(elapsed)")
    }

    /// While a big body decodes, another writer gets the database at once: the write
    /// transaction starts only once the whole body has proved valid.
    @Test func aWriterBesideADecodeIsNotKeptWaiting() throws {
        let (folder, database) = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = Source(name: "wide", kind: .jokes, url: URL(string: "http://h/")!)
        try SourceStore(database).add(source)
        let fetcher = SignallingFetcher(Self.jokeWithKeys(600_000))

        let writer = try CacheDatabase(path: folder + "/db.sqlite3", create: false)
        writer.connection.setBusyTimeout(milliseconds: 200)
        let synced = DispatchSemaphore(value: 0)
        let box = ReportBox()
        let engine = UncheckedBox(SyncEngine(database: database, fetcher: fetcher))
        detachThread {
            box.report = engine.value.sync(source)
            synced.signal()
        }
        fetcher.fetched.wait()
        sleepSeconds(0.05)  // the decode is under way; a transaction begun with it would be too
        let started = ContinuousClock.now
        var written: Error?
        do {
            try SourceStore(writer).add(Source(name: "beside", kind: .jokes, url: URL(string: "http://h/")!))
        } catch {
            written = error
        }
        let waited = ContinuousClock.now - started
        let decodeStillRunning = synced.wait(timeout: .now()) == .timedOut
        synced.wait()
        #expect(written == nil, "\(String(describing: written))")
        #expect(box.report?.outcome == .updated)
        // Meaningful only if the add ran while the sync was still busy.
        #expect(decodeStillRunning, "the decode ended before the add: make the body bigger")
        print("sources add beside a 600,000-key decode waited \(waited)")
    }

    @Test func theTimeoutEndsADecodeThatRunsPastIt() throws {
        let (folder, database) = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = Source(name: "wide", kind: .jokes, url: URL(string: "http://h/")!)
        try SourceStore(database).add(source)
        var options = SyncEngine.Options(timeout: 0.05)
        options.maxAttempts = 1
        let report = SyncEngine(database: database, fetcher: SignallingFetcher(Self.jokeWithKeys(1_500_000))).sync(source, options: options)
        // The reader throws `decodeTimedOut` only from inside the decode, at its deadline: the
        // failure itself proves the decode was cut short, on a quiet machine or a loaded one. (A
        // bound on the wall time failed a newcomer's run on a loaded machine, proving nothing.)
        guard case .upstream(.decodeTimedOut(let seconds)) = report.failure else {
            Issue.record("expected the decode to time out, got \(String(describing: report.failure))")
            return
        }
        #expect(seconds == 0.05)
        #expect(report.errorText?.contains("timed out after 0.05s") == true, "\(report.errorText ?? "")")
        #expect(try database.connection.scalarInt("SELECT count(*) FROM jokes") == 0)
        #expect(try database.connection.scalarInt("SELECT count(*) FROM sync_runs WHERE outcome = 'failed'") == 1)
    }

    @Test func aBusyDatabaseNamesTheProcessHoldingTheLock() throws {
        let (folder, database) = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/db.sqlite3"
        // Another process takes the write lock and keeps it for a while.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["sqlite3", path]
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = FileHandle.nullDevice
        try holder.run()
        // Ended by closing its input (a test thread may block SIGTERM, and a child inherits that).
        defer { try? input.fileHandleForWriting.close(); holder.waitUntilExit() }
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\n".utf8))
        let deadline = ContinuousClock.now + .seconds(20)
        while LockHolder.writer(of: path) != holder.processIdentifier && ContinuousClock.now < deadline { sleepSeconds(0.02) }
        #expect(LockHolder.writer(of: path) == holder.processIdentifier)

        database.connection.setBusyTimeout(milliseconds: 100)
        #expect {
            try SourceStore(database).add(Source(name: "x", kind: .jokes, url: URL(string: "http://h/")!))
        } throws: { error in
            let text = "\(error)"
            return text.contains("pid \(holder.processIdentifier) (sqlite3 ") && text.contains("holds its write lock")
                && !text.contains("SQLite error 5")
        }
    }
}

private final class ReportBox: @unchecked Sendable {
    var report: SyncReport?
}

/// Hands the engine (and its connection) to the one thread that uses it from then on.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
