import CSQLite
import FoundationEssentials

/// The full-text index behind `cache search`: `search_index` (FTS5), one document per joke, per
/// record and per vendor of an account's transactions (`SearchDocuments`), found by source and
/// key through `search_docs`, which holds each document's text too: the index keeps no copy of
/// it (FTS5's external content, migration 25), and reads it from there for snippets and its own
/// checks. A document's text changes only with its row in `search_docs`, whose trigger takes
/// the old text out of the index. A source's documents are built the first time it is searched (or
/// by `cache reindex`; `search_built` says which are), and from then on every reconcile brings
/// them up to date in its own transaction: a source nobody searches pays nothing at sync time.
///
/// The index is derived from the rows, so its damage never costs a row: a reconcile that cannot
/// update it lands its rows all the same and records the damage (`sync_state.index_damaged_at`),
/// which `check`, `status` and `metrics` report until `cache reindex` mends it; `reindex` mends
/// any damage, dropping and making the index again when FTS5 cannot rebuild it
/// (`SearchIndex+Damage.swift`).
package struct SearchIndex {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }
    init(db: Connection) { self.db = db }

    /// The index's definition, as migration 25 left it (the tests hold the two equal): what
    /// `remake` makes again.
    package static let definition = "CREATE VIRTUAL TABLE search_index USING fts5(text, content = 'search_docs', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2')"

    /// Runs `build`, which puts many documents into the index at once, with FTS5 set for it:
    /// 16 MiB of entries held in memory before it writes a segment (its default is 1 MiB), and
    /// no merging of segments while it builds. A million json records then make six segments,
    /// where merging as it built left seven, in less time than with its defaults, for some more
    /// memory (figures: docs/performance.md). Merging is on again after, at
    /// FTS5's default: later writes merge a little each, in proportion to what they write. The
    /// larger buffer stays (it only bounds what a write holds before its commit writes it).
    func bulk(_ build: () throws -> Void) throws {
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('hashsize', \(16 << 20))")
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('automerge', 0)")
        try build()
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('automerge', 4)")
    }

    /// After `runID` reconciled `source`, in the same transaction: the documents its changes
    /// touched are indexed again (every one after a load into an empty cache). Whether search
    /// is on is read here, in the transaction: `sources set --search` may have run since the sync began.
    func follow(_ source: String, _ sourceKind: SourceKind, runID: Int64) throws {
        guard try isBuilt(source) else { return }
        let storage = sourceKind.storage.definition
        let kind = storage.loggedAs.kind
        if try db.scalarInt("SELECT EXISTS (SELECT 1 FROM loads WHERE run_id = ? AND row_kind = ?)", [.int(runID), .text(kind)]) == 1 {
            return try index(source, sourceKind, only: nil)
        }
        let touched = try db.scalarText("""
            SELECT json_group_array(doc) FROM (SELECT DISTINCT \(storage.search.changedDocument) AS doc FROM changes c
                                               WHERE c.run_id = ? AND c.row_kind = ? AND doc IS NOT NULL)
            """, [.int(runID), .text(kind)])
        guard let touched, touched != "[]" else { return }
        try index(source, sourceKind, only: touched)
    }

    /// `cache reindex`: each source's documents made again from its rows, and FTS5's shared
    /// index rebuilt when every source is asked for or it is damaged (at `path`). An index that
    /// cannot be rebuilt or written is made again whole, every source with search on indexed
    /// anew; the answer says which was done.
    package func reindex(_ sources: [Source], everySource: Bool, path: String) throws -> Mend {
        // Made again whole, the index holds the built sources: those named are built too.
        func remade(_ mend: Mend) throws -> Mend {
            for source in sources { try rebuild(source) }
            return mend
        }
        // A source that holds every document of the index is indexed into a new one (`indexWhole`):
        // FTS5's check of the old one, long at a million documents, would find nothing that outlasts it.
        let remadeByItsOnlySource = try sources.count == 1 && !holdsDocuments(besides: sources[0].name)
        if everySource || (!remadeByItsOnlySource && Self.structureProblem(path: path) != nil) {
            let mend = try rebuildStructure()
            if mend != .rebuilt { return try remade(mend) }
        }
        for source in sources {
            do {
                try rebuild(source)
            } catch where Self.isDamage(error) {
                return try remade(remakeWhole())
            }
        }
        return .rebuilt
    }

    /// Whether `source` has search on and its documents built (kept in step from then on).
    package func isBuilt(_ source: String) throws -> Bool {
        try db.scalarInt("""
            SELECT s.search = 1 AND EXISTS (SELECT 1 FROM search_built b WHERE b.source = s.name) FROM sources s WHERE s.name = ?
            """, [.text(source)]) == 1
    }

    /// Before `source`'s first search: its documents built, through a connection of their own
    /// that writes (`path`'s); whether it built them. A read-only cache cannot, and says where
    /// to build them instead.
    package static func buildForFirstSearch(_ source: Source, path: String, readOnly: Bool, reading: CacheDatabase) throws -> Bool {
        guard source.searchable, try !SearchIndex(reading).isBuilt(source.name) else { return false }
        if readOnly {
            throw CacheError.readOnly(path: path, reason: "the search index of '\(source.name)' is built on its first search, which writes; run 'cache reindex \(source.name)' where the cache is written (the primary), and its syncs keep it in step from then on")
        }
        try SearchIndex(CacheDatabase(path: path, access: .write)).rebuild(source)
        return true
    }

    /// Every document of `source` indexed again from its rows (a source alone in the index keeps
    /// those already what its rows make, see `indexWhole`), in one transaction, and marked
    /// built. A source with search off keeps none: any it has are taken out. The source's row
    /// is read first in the transaction, so its documents' parent is not looked up again for
    /// each (a share of a reindex's instructions; figures: docs/performance.md).
    package func rebuild(_ source: Source) throws {
        try db.withoutForeignKeys { try rebuildChecked(source) }
    }

    private func rebuildChecked(_ source: Source) throws {
        try db.inTransaction {
            // Whether search is on, read in the transaction: `sources set --search` may have run
            // since `source` was read (a source removed since has nothing to build).
            guard let search = try db.scalarInt("SELECT search FROM sources WHERE name = ?", [.text(source.name)]) else { return }
            if search == 1 {
                // Documents a sync could not keep in step (its damage recorded) are made again
                // without first finding whether they are: FTS5 would index them twice.
                let damaged = try db.scalarInt("SELECT index_damaged_at IS NOT NULL FROM sync_state WHERE source = ?", [.text(source.name)]) == 1
                try indexWhole(source.name, source.kind, reusingDocumentsInStep: !damaged)
                try db.run("INSERT OR REPLACE INTO search_built (source, built_at) VALUES (?, ?)", [.text(source.name), .text(Timestamp.now())])
            } else {
                try db.run("DELETE FROM search_docs WHERE source = ?", [.text(source.name)])
                try db.run("DELETE FROM search_built WHERE source = ?", [.text(source.name)])
            }
            try db.run("UPDATE sync_state SET index_damaged_at = NULL, index_damage = NULL WHERE source = ?", [.text(source.name)])
        }
    }

    /// Every built source's documents made again (after a migration asks for it).
    func indexAll() throws {
        let sources = try db.query("""
            SELECT name, kind FROM sources WHERE search = 1 AND name IN (SELECT source FROM search_built) ORDER BY name
            """) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        for (name, kind) in sources {
            // A kind this binary does not know has nothing it can index.
            guard let kind = SourceKind(rawValue: kind) else { continue }
            try index(name, kind, only: nil)
        }
    }

    /// Drops the documents of `source` (all, or those in the JSON array `only`) and indexes them
    /// again from the rows.
    func index(_ source: String, _ kind: SourceKind, only: String?) throws {
        let name = SQLValue.text(source)
        guard let only else { return try indexWhole(source, kind) }
        // The trigger on search_docs takes each document's old text out of search_index.
        try db.run("DELETE FROM search_docs WHERE source = ?1 AND doc IN (SELECT value FROM json_each(?2))", [name, .text(only)])
        try add(source, kind, only: only)
    }

    /// Adds the documents of `source` (every one, or those in the JSON array `only`), and their
    /// text to the index, each by one statement: a new document's id comes after every other's
    /// (SQLite gives the largest id plus one), so the new ones are those past the old largest.
    /// A document without text breaks `search_docs`' NOT NULL and is left out (`OR IGNORE`):
    /// a filter on the text around the query would compute each text twice (SQLite flattens
    /// the query into it) (figures: docs/performance.md). Nothing else can conflict: the
    /// documents named were taken out first.
    private func add(_ source: String, _ kind: SourceKind, only: String?) throws {
        let after = try db.scalarInt("SELECT coalesce(max(id), 0) FROM search_docs") ?? 0
        try addDocuments(source, kind, only: only)
        try db.run("INSERT INTO search_index (rowid, text) SELECT id, text FROM search_docs WHERE id > ?", [.int(after)])
    }

    /// The rows of `search_docs` that `add` adds, without their text in the index.
    private func addDocuments(_ source: String, _ kind: SourceKind, only: String?) throws {
        let documents = kind.storage.definition.search.documents(only != nil)
        try db.run("INSERT OR IGNORE INTO search_docs (source, doc, text) SELECT ?1, doc, text FROM (\(documents))",
                   only.map { [.text(source), .text($0)] } ?? [.text(source)])
    }

    /// Whether the index holds documents of any source but `source`: two lookups, one each side
    /// of it in the index by source (`source <> ?` would read every document of `source` first).
    private func holdsDocuments(besides source: String) throws -> Bool {
        try db.scalarInt("""
            SELECT EXISTS (SELECT 1 FROM search_docs WHERE source < ?1) OR EXISTS (SELECT 1 FROM search_docs WHERE source > ?1)
            """, [.text(source)]) == 1
    }

    /// Every document of `source` made again, in SQLite's own loops (`add`) rather than a
    /// statement step at a time from here. A source alone in the index empties it at once
    /// (taking its documents out one by one costs as much as putting them in), and FTS5 then
    /// reads them into the new index itself.
    ///
    /// With `reusingDocumentsInStep` (a reindex) a source alone keeps the documents it holds
    /// where they are what its rows make now: FTS5 indexes them at once while another thread
    /// finds whether they are (`DocumentsCheck`), and only where they are not are they made
    /// again and indexed once more. Writing them again would add half of FTS5's own time to
    /// a reindex, and more to what its commit writes.
    private func indexWhole(_ source: String, _ kind: SourceKind, reusingDocumentsInStep: Bool = false) throws {
        let name = SQLValue.text(source)
        if try holdsDocuments(besides: source) {
            try db.run("DELETE FROM search_docs WHERE source = ?", [name])
            return try bulk { try add(source, kind, only: nil) }
        }
        try db.execute("DROP TABLE search_index")
        try db.execute(Self.definition)
        // Alone in a new and empty index, its documents are indexed by FTS5 reading them itself
        // ('rebuild'): less time than an INSERT from them, which steps a statement for each
        // (figures: docs/performance.md).
        let rebuildIndex = { try bulk { try db.execute("INSERT INTO search_index (search_index) VALUES ('rebuild')") } }
        if reusingDocumentsInStep, let check = DocumentsCheck(db, source, kind) {
            let indexed = Result { try rebuildIndex() }
            // A check that fails (its connection refused, say) leaves them to be made again.
            let inStep = (try? check.inStep()) ?? false
            try indexed.get()
            if inStep { return }
        }
        try emptyDocuments()
        try addDocuments(source, kind, only: nil)
        try rebuildIndex()
    }

    /// Whether the documents held for a source are those its rows make now, every one with its
    /// text, found on a thread of its own through a connection of its own: their digests agree
    /// (`cache_digest`; figures: docs/performance.md). It reads the snapshot the caller's write
    /// transaction began from (in WAL mode a reader sees no uncommitted page), which that
    /// transaction must not change the documents or rows of until `inStep` answers.
    private struct DocumentsCheck {
        private let thread: JoinedThread
        private let answer: Answer

        private final class Answer: @unchecked Sendable {
            var result: Result<Bool, Error> = .success(false)
        }

        /// Nil for a database without a file (in memory), which no other connection can read.
        init?(_ db: Connection, _ source: String, _ kind: SourceKind) {
            guard let file = sqlite3_db_filename(db.handle, "main"), file.pointee != 0 else { return nil }
            let path = String(cString: file)
            let documents = kind.storage.definition.search.documents(false)
            let answer = Answer()
            self.answer = answer
            thread = JoinedThread {
                answer.result = Result {
                    let reader = try Connection(path: path, readOnly: true)
                    return try reader.inReadTransaction {
                        let held = try reader.scalarText("SELECT cache_digest(doc, text) FROM search_docs WHERE source = ?1", [.text(source)])
                        // A source never built holds none: its rows need not be read.
                        guard let held, !held.hasPrefix("0:") else { return false }
                        return try held == reader.scalarText("SELECT cache_digest(doc, text) FROM (\(documents))", [.text(source)])
                    }
                }
            }
        }

        /// Waits for the thread's answer (once).
        func inStep() throws -> Bool {
            thread.join()
            return try answer.result.get()
        }
    }

    /// Runs `drop`, which drops `search_docs`, without overwriting each page it frees with zeros
    /// first: Debian's SQLite has `secure_delete` on, which writes every freed page once more
    /// (most of a reindex's drops; figures: docs/performance.md). Those pages hold only the
    /// documents of rows the file still holds (a document is deleted with its row, and its text
    /// then zeroed in a page that is written anyway, under `ON` and `FAST` alike), and the
    /// documents made again next take most of them back at once. Not so FTS5's tables, whose
    /// segments keep a deleted document's words until a merge rewrites them: they are dropped
    /// under the setting as it is. The setting is as it was after.
    func droppingDocuments(_ drop: () throws -> Void) throws {
        let before = Int(try db.scalarInt("PRAGMA secure_delete") ?? 1)
        try db.execute("PRAGMA secure_delete = FAST")
        defer { try? db.execute("PRAGMA secure_delete = \(["OFF", "ON", "FAST"][min(max(before, 0), 2)])") }
        try drop()
    }

    /// Every row of `search_docs` taken out at once, the index being new and empty: the table is
    /// dropped and made again as it was (its indexes and trigger too), in the same transaction.
    /// A `DELETE` takes the rows out one by one, with an FTS5 delete and two index entries each
    /// (slow at a million documents; figures: docs/performance.md): with foreign keys on, SQLite
    /// does not clear whole a table that has one.
    func emptyDocuments() throws {
        let definitions = try db.query("""
            SELECT sql FROM sqlite_schema WHERE tbl_name = 'search_docs' AND sql IS NOT NULL
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid
            """) { $0.text(0) ?? "" }
        try droppingDocuments { try db.execute("DROP TABLE search_docs") }
        for definition in definitions { try db.execute(definition) }
    }
}
