import CSQLite
import Foundation
import Testing
@testable import OfflineCache

@Suite(.computing) struct StoreTests {
    @Test func aTransactionRollsBackAndRethrowsTheFirstError() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        #expect {
            try db.inTransaction {
                try db.run("INSERT INTO t (id, v) VALUES (1, 'a')")
                try db.run("INSERT INTO t (id, v) VALUES (1, 'b')")
            }
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.extendedCode == 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
                && error.sql == "INSERT INTO t (id, v) VALUES (1, 'b')"
                && error.debugDescription.hasPrefix("SQLite error 1555: UNIQUE constraint failed: t.id - while executing `INSERT")
                && error.description == "SQLite error 1555: UNIQUE constraint failed: t.id"
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(sqlite3_get_autocommit(db.handle) == 1)
    }

    @Test func boundValuesNeverAppearInErrors() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (v TEXT NOT NULL)")
        do {
            try db.run("INSERT INTO t (v) VALUES (?)", [.null])
            Issue.record("expected a NOT NULL failure")
        } catch {
            #expect(error.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
            try db.run("INSERT INTO t (v) VALUES (?)", [.text("secret-value")])
        }
        #expect(throws: DatabaseError.self) { try db.run("INSERT INTO t (v) VALUES (?), (?)", [.text("secret-value"), .null]) }
        do { try db.run("INSERT INTO t (v) VALUES (?), (?)", [.text("secret-value"), .null]) } catch {
            #expect(!error.description.contains("secret-value"))
        }
    }

    @Test func valuesRoundTrip() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (i INTEGER, d REAL, s TEXT, n TEXT)")
        try db.run("INSERT INTO t VALUES (?, ?, ?, ?)", [.int(Int64.max), .double(7.23), .text("héllo \u{1F600}"), .null])
        let row = try db.query("SELECT i, d, s, n FROM t") { [$0.value(0), $0.value(1), $0.value(2), $0.value(3)] }.first
        #expect(row == [.int(Int64.max), .double(7.23), .text("héllo \u{1F600}"), .null])
    }

    @Test func theDatabaseIsOpenedInWALWithForeignKeysAndLargePages() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try CacheDatabase(path: folder + "/db.sqlite3", create: true)
        #expect(try database.connection.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try database.connection.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try database.connection.scalarInt("PRAGMA page_size") == 16384)
        // An existing file keeps its pages: reopening changes nothing.
        let reopened = try CacheDatabase(path: folder + "/db.sqlite3", create: false)
        #expect(try reopened.connection.scalarInt("PRAGMA page_size") == 16384)
        #expect(throws: CacheError.self) { try CacheDatabase(path: folder + "/missing.sqlite3", create: false) }
    }
}

@Suite(.computing) struct SupportTests {
    @Test(arguments: [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86_400),
                      ("1h30m", 5400), ("2d12h", 216_000), ("1m30s", 90), ("1d1h1m1s", 90_061), ("0h5m", 300)])
    func durationsParse(_ text: String, _ seconds: Int) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(arguments: ["", "0", "-5", "5x", "m", "1.5h", " 5m", "5 m", "99999999999d",
                      "30m1h", "1h1h", "1h30", "h30m", "0m0s", "１h"])
    func badDurationsAreRejected(_ text: String) {
        #expect(DurationText.seconds(text) == nil)
    }

    @Test func timestampsRoundTripAndSortAsText() throws {
        let date = Date(timeIntervalSince1970: 1_796_004_000.123)
        let text = Timestamp.format(date)
        #expect(text == "2026-11-30T02:00:00.123Z")
        let parsed = try #require(Timestamp.parse(text))
        #expect(abs(parsed.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
        #expect(Timestamp.format(Date(timeIntervalSince1970: 5)) < Timestamp.format(Date(timeIntervalSince1970: 60)))
    }

    /// The stored form, digits placed by hand, against SQLite's own `strftime` (a peer): every
    /// year from 0000 to 9999, before 1970 too (a fraction of a second there once crashed the
    /// formatter), any second, milliseconds a binary fraction holds exactly.
    @Test func timestampsAreWhatSQLiteWritesForTheSameMoment() throws {
        let db = try Connection(path: ":memory:")
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2000 {
            let seconds = Double(Int.random(in: -62_167_219_200...253_402_300_798, using: &generator)) + Double(index % 8) * 0.125
            let sqlite = try db.query("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?, 'unixepoch')", [.double(seconds)]) { $0.text(0) }.first ?? nil
            #expect(Timestamp.format(Date(timeIntervalSince1970: seconds)) == sqlite, "\(seconds)")
        }
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func transactionIDsAreStableAndDistinct() {
        let id = TransactionID.make(source: "bank", date: "2026-11-28T08:15:14Z", vendor: "Starbucks", ordinal: 0)
        // Fixed forever: ids must survive re-syncs and new versions of cache.
        #expect(id == "edf505d21b6a43a7")
        #expect(TransactionID.make(source: "bank", date: "2026-11-28T08:15:14Z", vendor: "Starbucks", ordinal: 1) != id)
        #expect(TransactionID.make(source: "other", date: "2026-11-28T08:15:14Z", vendor: "Starbucks", ordinal: 0) != id)
    }

    @Test func jsonBytesWriteWhatJSONValueWrites() {
        let strings = ["", "plain", "quote \" and \\ backslash", "line\nbreak\r\ttab", "\u{0}\u{1F}\u{7F} controls",
                       "Café ☕ 😀", "e\u{301}", "</script>"]
        for text in strings {
            var bytes: [UInt8] = []
            JSONBytes.string(text, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == JSONValue.string(text).text, "\(text.debugDescription)")
        }
        for number in [0, -0.0, 12, -12.5, 339.65, 0.1 + 0.2, 1e-7, 1e15, 1e22, .infinity] {
            var bytes: [UInt8] = []
            JSONBytes.double(number, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == JSONValue.double(number).text, "\(number)")
        }
    }

    @Test func urlsLoseCredentialsAndSecretQueryValues() {
        let url = URL(string: "https://user:pw@example.com:8443/a/b?token=abc#frag")!
        #expect(Source.redacted(url) == "https://example.com:8443/a/b?token=REDACTED")
        let mixed = URL(string: "https://h/x?page=2&api_key=k1&X-Amz-Signature=s&sort=date&access_token=t&monkey=banana&apikey=k2")!
        #expect(Source.redacted(mixed) == "https://h/x?page=2&api_key=REDACTED&X-Amz-Signature=REDACTED&sort=date&access_token=REDACTED&monkey=banana&apikey=REDACTED")
    }
}
