import Foundation
import Testing
@testable import OfflineCache

/// `cache reindex` of a source at the index's seam, on a real SQLite file: the index made again
/// whole answers as before, beside another source or alone, and leaves the connection's
/// settings as it found them.
@Suite(.computing) struct SearchIndexTests {
    /// The engine tests' file and canned fetcher, with json sources of numbered items.
    typealias Fixture = SyncEngineTests.Fixture

    /// A source alone in the index is indexed into a new one (its old tables dropped, FTS5
    /// reading the documents itself), again and again; beside another, its documents are
    /// replaced in place. Either way every document is there, FTS5's own check passes, and
    /// searches find what they did.
    @Test func aReindexAloneOrBesideAnotherSourceFindsWhatItFoundBefore() throws {
        let fixture = try Fixture()
        let big = try fixture.source("big", records: 3_000)
        let index = SearchIndex(fixture.database)
        let db = fixture.database.connection
        for round in 1...2 {
            try index.rebuild(big)
            #expect(try index.problems("big", .json) == [], "round \(round)")
            #expect(try db.scalarInt("SELECT count(*) FROM search_docs") == 3_000)
            #expect(try fixture.found(big, "item-2999") == ["2999"])
            #expect(try db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH 'cat 3'") == 429)
            try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        }

        let small = try fixture.source("small", records: 20)
        try index.rebuild(small)
        try index.rebuild(big)
        for (source, count) in [(big, 3_000), (small, 20)] {
            #expect(try index.problems(source.name, .json) == [])
            #expect(try db.scalarInt("SELECT count(*) FROM search_docs WHERE source = ?", [.text(source.name)]) == Int64(count))
            #expect(try fixture.found(source, "item-17") == ["17"])
        }
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
    }

    /// A reindex of a source alone keeps the documents it holds where they are what its rows
    /// make, and FTS5 indexes them anew: a document taken out of the index and put back as it
    /// was, with a new id (made again, it would have its first one back), keeps that id and is
    /// found again. Where a sync recorded damage to the index, they are made again unchecked.
    @Test func aReindexKeepsDocumentsInStepWithTheRows() throws {
        let fixture = try Fixture()
        let source = try fixture.source("items", records: 500)
        let index = SearchIndex(fixture.database)
        let db = fixture.database.connection
        try index.rebuild(source)
        try db.execute("DELETE FROM search_docs WHERE doc = '1'")
        try db.execute("INSERT INTO search_docs (source, doc, text) SELECT source, key, cache_strings(record) FROM records WHERE key = '1'")
        #expect(try fixture.found(source, "item-1") == [])

        try index.rebuild(source)
        #expect(try db.scalarInt("SELECT id FROM search_docs WHERE doc = '1'") == 501)
        #expect(try fixture.found(source, "item-1") == ["1"])
        #expect(try db.scalarInt("SELECT count(*) FROM search_index WHERE search_index MATCH 'cat 3'") == 72)
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")

        // Where a sync recorded damage, they are made again unchecked: the first id comes back.
        try index.recordDamage(of: "items", "a test's", at: Timestamp.now())
        try index.rebuild(source)
        #expect(try db.scalarInt("SELECT id FROM search_docs WHERE doc = '1'") == 1)
        #expect(try index.damage().isEmpty)
        #expect(try fixture.found(source, "item-1") == ["1"])
    }

    /// Documents out of step with the rows, each way they can be (a text changed behind the
    /// cache's back, a document lost, one whose record is gone, one whose record now has no
    /// text), are made again by a reindex of the source alone, and FTS5 finds what the rows hold.
    @Test(arguments: [
        "UPDATE search_docs SET text = 'stale words' WHERE doc = '7'",
        "DELETE FROM search_docs WHERE doc = '7'",
        "INSERT INTO search_docs (source, doc, text) VALUES ('items', 'gone', 'stale words')",
        "UPDATE records SET record = '{\"id\": 7}' WHERE key = '7'",
    ])
    func aReindexMakesAgainDocumentsOutOfStep(_ drift: String) throws {
        let fixture = try Fixture()
        let source = try fixture.source("items", records: 50)
        let index = SearchIndex(fixture.database)
        let db = fixture.database.connection
        try index.rebuild(source)
        try db.withoutForeignKeys { try db.execute(drift) }
        #expect(try index.problems("items", .json) != [])

        try index.rebuild(source)
        #expect(try index.problems("items", .json) == [])
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        #expect(try fixture.found(source, "stale") == [])
        let seven = try db.scalarText("SELECT record FROM records WHERE key = '7'") ?? ""
        #expect(try fixture.found(source, "item-7") == (seven.contains("item-7") ? ["7"] : []))
        #expect(try fixture.found(source, "item-8") == ["8"])
    }

    /// The documents' drop skips zeroing the pages it frees (`secure_delete` at FAST while it
    /// runs), and puts the setting back as it was, whatever it was, when it fails too; a reindex
    /// leaves it so.
    @Test(arguments: [0, 1, 2])
    func droppingTheDocumentsLeavesSecureDeleteAsItFoundIt(setting: Int) throws {
        struct Refused: Error {}
        let fixture = try Fixture()
        let source = try fixture.source("items", records: 50)
        let db = fixture.database.connection
        let index = SearchIndex(fixture.database)
        try db.execute("PRAGMA secure_delete = \(["OFF", "ON", "FAST"][setting])")
        var during: Int64?
        try index.droppingDocuments { during = try db.scalarInt("PRAGMA secure_delete") }
        #expect(during == 2)
        #expect(try db.scalarInt("PRAGMA secure_delete") == Int64(setting))
        #expect(throws: Refused.self) { try index.droppingDocuments { throw Refused() } }
        #expect(try db.scalarInt("PRAGMA secure_delete") == Int64(setting))

        try index.rebuild(source)
        try index.rebuild(source)
        #expect(try db.scalarInt("PRAGMA secure_delete") == Int64(setting))
        #expect(try fixture.found(source, "item-7") == ["7"])
    }
}

extension SyncEngineTests.Fixture {
    /// A json source of `count` records, each named "item-N" in "cat-(N % 7)", synced.
    func source(_ name: String, records count: Int) throws -> Source {
        var source = Source(name: name, kind: .json, url: URL(string: "http://h/")!)
        source.layout = RecordLayout(key: [JSONPath("id")!])
        try SourceStore(database).add(source)
        let body = "[" + (1...count).map { #"{"id": \#($0), "name": "item-\#($0)", "category": "cat-\#($0 % 7)"}"# }.joined(separator: ",") + "]"
        #expect(sync(source, body).outcome != .failed)
        return source
    }

    /// The keys of what a search of `source` finds, best first.
    func found(_ source: Source, _ query: String) throws -> [String] {
        try CacheReader(database).search(source, query: query, limit: 5).map(\.document)
    }
}
