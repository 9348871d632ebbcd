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
/// any damage, dropping and making the index again when FTS5 cannot rebuild it.
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
    /// where merging as it built left seven: FTS5's part took 2.0–2.2 s in the `sqlite3` CLI,
    /// against 3.2–3.4 s with its defaults, for 40 MB more memory. Merging is on again after, at
    /// FTS5's default: later writes merge a little each, in proportion to what they write. The
    /// larger buffer stays (it only bounds what a write holds before its commit writes it).
    private func bulk(_ build: () throws -> Void) throws {
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('hashsize', \(16 << 20))")
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('automerge', 0)")
        try build()
        try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('automerge', 4)")
    }

    /// Whether an error from the index is its damage (a broken page, a config FTS5 refuses, a
    /// shadow table gone, a definition it cannot load), as opposed to the file or the machine
    /// failing, or a statement of ours being wrong: those fail the sync, as any other would.
    package static func isDamage(_ error: Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        if error.primaryCode == SQLITE_CORRUPT { return true }
        guard error.primaryCode == SQLITE_ERROR else { return false }
        let message = error.message.lowercased()
        return ["fts5", "search_index", "vtable", "tokenizer", "malformed"].contains { message.contains($0) }
    }

    /// Runs `body`, a change to the index inside the caller's transaction (a sync's, a
    /// `sources set`'s), so that damage to the index never costs the rows: the index's part is
    /// undone to a savepoint and recorded against `source`, and the transaction goes on.
    ///
    /// A damaged page (SQLITE_CORRUPT itself, not FTS5's own SQLITE_CORRUPT_VTAB) is different:
    /// after it SQLite refuses every write of the transaction, so it is thrown as `PagesDamaged`
    /// for the caller to roll back whole and run again without the index.
    func keepingRows(of source: String, at now: String = Timestamp.now(), _ body: () throws -> Void) throws {
        try db.execute("SAVEPOINT search_index_change")
        do {
            try body()
            try db.execute("RELEASE search_index_change")
        } catch let error as DatabaseError where error.extendedCode == SQLITE_CORRUPT {
            throw PagesDamaged(message: error.message)
        } catch where Self.isDamage(error) {
            try db.execute("ROLLBACK TO search_index_change")
            try db.execute("RELEASE search_index_change")
            try recordDamage(of: source, (error as? DatabaseError)?.message ?? "\(error)", at: now)
        }
    }

    /// The index's pages are damaged: the transaction that met them must end (see `keepingRows`).
    package struct PagesDamaged: Error, CustomStringConvertible {
        let message: String
        package var description: String { "pages of the search index are damaged (\(message)); 'cache reindex' makes it again" }
    }

    /// Runs `transaction`; should it meet damaged pages of the index, the index is made again
    /// (`remakeWhole`) and the transaction run once more: a change to a source (`sources set`,
    /// `remove`) is never refused for the index's sake.
    func mendingDamagedPages<T>(_ transaction: () throws -> T) throws -> T {
        do {
            return try transaction()
        } catch is PagesDamaged {
            _ = try remakeWhole()
            return try transaction()
        }
    }

    /// Records that `source`'s documents are out of step since `now` (the first time), and why.
    func recordDamage(of source: String, _ reason: String, at now: String) throws {
        try db.run("""
            UPDATE sync_state SET index_damaged_at = coalesce(index_damaged_at, ?), index_damage = ? WHERE source = ?
            """, [.text(now), .text(reason), .text(source)])
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
        // FTS5's check of the old one, 1.5 s at a million documents, would find nothing that outlasts it.
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
    /// each (4% of a reindex's instructions).
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
    /// the query into it), 0.7 s more over a million records. Nothing else can conflict: the
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
        // ('rebuild'): 6% less time than an INSERT from them, which steps a statement for each.
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
    /// (`cache_digest`, 1 s for a million records). It reads the snapshot the caller's write
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
    /// (0.15 s of a million-record reindex, most of its drops). Those pages hold only the
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
    /// (1.4 s for a million documents): with foreign keys on, SQLite does not clear whole a table
    /// that has one.
    private func emptyDocuments() throws {
        let definitions = try db.query("""
            SELECT sql FROM sqlite_schema WHERE tbl_name = 'search_docs' AND sql IS NOT NULL
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid
            """) { $0.text(0) ?? "" }
        try droppingDocuments { try db.execute("DROP TABLE search_docs") }
        for definition in definitions { try db.execute(definition) }
    }

    /// What differs between the documents and the rows of `source`, in words; empty when they
    /// agree. A source with search off should have no documents at all. (Whether the index
    /// holds the documents' text is FTS5's own check: `structureProblem`.)
    package func problems(_ source: String, _ kind: SourceKind, searchable: Bool = true) throws -> [String] {
        // `check` reads a file as it is: before migration 25 the text was in the index.
        let textBeside = try db.scalarInt("SELECT count(*) FROM pragma_table_info('search_docs') WHERE name = 'text'") == 1
        let counts = try db.query("""
            WITH wanted AS (\(searchable ? "SELECT doc, text FROM (\(kind.storage.definition.search.documents(false))) WHERE text IS NOT NULL"
                                          : "SELECT NULL AS doc, NULL AS text WHERE 0")),
                 held AS (\(textBeside ? "SELECT doc, text FROM search_docs WHERE source = ?1"
                             : "SELECT d.doc, i.text FROM search_docs d LEFT JOIN search_index i ON i.rowid = d.id WHERE d.source = ?1"))
            SELECT (SELECT count(*) FROM wanted WHERE doc NOT IN (SELECT doc FROM held)),
                   (SELECT count(*) FROM wanted w JOIN held h ON h.doc = w.doc WHERE h.text IS NOT w.text),
                   (SELECT count(*) FROM held WHERE doc NOT IN (SELECT doc FROM wanted))
            """, [.text(source)]) { [$0.int(0), $0.int(1), $0.int(2)] }.first ?? [0, 0, 0]
        let documents = { (count: Int) in "\(count) document\(count == 1 ? "" : "s")" }
        return [
            counts[0] > 0 ? "\(documents(counts[0])) of '\(source)' missing from the search index" : nil,
            counts[1] > 0 ? "\(documents(counts[1])) of '\(source)' out of date in the search index" : nil,
            counts[2] > 0 ? "\(documents(counts[2])) in the search index that '\(source)' no longer has" : nil,
        ].compactMap { $0 }
    }

    /// Rebuilds FTS5's own index from the documents' text, mending a damaged one and taking out
    /// entries that belong to no document (`cache reindex` of every source). Where FTS5 cannot do that
    /// (its config row damaged, a shadow table gone, its text itself unreadable), the index is
    /// made again whole (`remakeWhole`); the answer says which was done.
    @discardableResult
    package func rebuildStructure() throws -> Mend {
        do {
            try db.inTransaction {
                try bulk { try db.run("INSERT INTO search_index (search_index) VALUES ('rebuild')") }
                try db.run("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
            }
            return .rebuilt
        } catch where Self.isDamage(error) {
            return try remakeWhole()
        }
    }

    /// How `reindex` mended the index.
    package enum Mend: Sendable {
        /// FTS5 rebuilt it from the documents' text, or only the named sources' documents were made again.
        case rebuilt
        /// Dropped and made again, every source indexed anew.
        case remade
        /// Made again beside its old pages, which were damaged past dropping: they stay in the
        /// file, unused (`check` counts them), until it is rebuilt (VACUUM, or a restore).
        case remadeBesideDamagedPages
    }

    /// `remake` in a transaction of its own; where the old index's pages are too damaged to drop
    /// (SQLite's own "malformed", after which it refuses the transaction's writes), in another
    /// that takes the old index out of the schema without reading its pages.
    func remakeWhole() throws -> Mend {
        do {
            try db.inTransaction { try remake() }
            return .remade
        } catch let error as DatabaseError where error.primaryCode == SQLITE_CORRUPT {
            try db.inTransaction {
                try db.execute("PRAGMA writable_schema = ON")
                let removal = attempt("""
                    DELETE FROM sqlite_schema WHERE name IN \(Self.tables) OR tbl_name IN \(Self.tables)
                    """)
                try db.execute("PRAGMA writable_schema = RESET")
                if let removal { throw removal }
                try remake()
            }
            return .remadeBesideDamagedPages
        }
    }

    /// The index's table and its shadow tables (`content` only before migration 25), as an SQL list.
    static let tables = "('search_index', 'search_index_data', 'search_index_idx', 'search_index_content', 'search_index_docsize', 'search_index_config')"

    /// Drops the index and makes it again, then indexes every source with search on, inside the
    /// caller's transaction. FTS5 must read its config row to drop its table, so a config it
    /// refuses is replaced first by one it reads (the index is about to go anyway).
    func remake() throws {
        // The shadow tables FTS5 opens its table with, made again where they are gone (as FTS5
        // makes them), and a config it reads.
        try db.execute("""
            CREATE TABLE IF NOT EXISTS search_index_data (id INTEGER PRIMARY KEY, block BLOB);
            CREATE TABLE IF NOT EXISTS search_index_idx (segid, term, pgno, PRIMARY KEY (segid, term)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS search_index_docsize (id INTEGER PRIMARY KEY, sz BLOB);
            DROP TABLE IF EXISTS search_index_config;
            CREATE TABLE search_index_config (k PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO search_index_config VALUES ('version', 4);
            """)
        if let refused = attempt("DROP TABLE IF EXISTS search_index") {
            guard Self.isDamage(refused) else { throw refused }
            // FTS5 cannot open it even so: its schema row is taken out by hand, and the schema
            // read again without it.
            try db.execute("PRAGMA writable_schema = ON")
            let removal = attempt("DELETE FROM sqlite_schema WHERE name = 'search_index'")
            try db.execute("PRAGMA writable_schema = RESET")  // off again, and the schema read anew
            if let removal { throw removal }
        }
        for shadow in ["data", "idx", "content", "docsize", "config"] {
            try db.execute("DROP TABLE IF EXISTS search_index_\(shadow)")
        }
        try db.execute(Self.definition)
        try emptyDocuments()
        // The built sources' documents, made again (the others are built when first searched).
        for (name, kind) in try db.query("""
            SELECT name, kind FROM sources WHERE search = 1 AND name IN (SELECT source FROM search_built) ORDER BY name
            """, row: { ($0.text(0) ?? "", $0.text(1) ?? "") }) {
            guard let kind = SourceKind(rawValue: kind) else { continue }
            try index(name, kind, only: nil)
        }
        try db.execute("UPDATE sync_state SET index_damaged_at = NULL, index_damage = NULL")
    }

    /// Runs `sql`, giving back its error rather than throwing it.
    private func attempt(_ sql: String) -> DatabaseError? {
        do {
            try db.execute(sql)
            return nil
        } catch {
            return error
        }
    }

    /// The sources whose syncs could not update the index (since when, and why): their
    /// documents are out of step until `cache reindex`.
    package func damage() throws -> [(source: String, since: String, reason: String)] {
        try db.query("SELECT source, index_damaged_at, coalesce(index_damage, '') FROM sync_state WHERE index_damaged_at IS NOT NULL ORDER BY source") {
            ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2) ?? "")
        }
    }

    /// FTS5's own check of its index against the documents' text (an entry belonging to no
    /// document, or a document's text missing, is damage too); nil when they agree, or when the
    /// file cannot be opened to write or another process is writing it (the check is an
    /// `INSERT` that changes nothing, run in a transaction rolled back).
    package static func structureProblem(path: String) -> String? {
        guard let db = try? Connection(path: path) else { return nil }
        db.setBusyTimeout(milliseconds: 1000)
        guard (try? db.execute("BEGIN IMMEDIATE")) != nil else { return nil }
        defer { try? db.execute("ROLLBACK") }
        do {
            try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
            return nil
        } catch where isDamage(error) {
            return "the search index is damaged (\(error.message))"
        } catch {
            return nil
        }
    }
}
