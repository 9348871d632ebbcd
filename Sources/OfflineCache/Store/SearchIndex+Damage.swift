import CSQLite

/// The index's damage and its mending: what counts as damage, a sync that keeps its rows
/// through it and records it, `check`'s comparison of documents with rows and FTS5's own check,
/// and the index rebuilt by FTS5 or made again whole (`cache reindex`).
extension SearchIndex {
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
