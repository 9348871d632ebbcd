import FoundationEssentials

/// The full-text index behind `cache search`: `search_index` (FTS5), one document per joke, per
/// record and per vendor of an account's transactions (`SearchDocuments`), found by source and
/// key through `search_docs`. Every reconcile brings it up to date in its own transaction.
package struct SearchIndex {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }
    init(db: Connection) { self.db = db }

    /// After `runID` reconciled `source`, in the same transaction: the documents its changes
    /// touched are indexed again (every one after a load into an empty cache). Whether search
    /// is on is read here, in the transaction: `sources set --search` may have run since the sync began.
    func follow(_ source: String, _ sourceKind: SourceKind, runID: Int64) throws {
        guard try db.scalarInt("SELECT search FROM sources WHERE name = ?", [.text(source)]) == 1 else { return }
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

    /// Every document of `source` indexed again from its rows, in one transaction: `cache reindex`.
    /// A source with search off keeps none: any it has are taken out.
    package func rebuild(_ source: Source) throws {
        try db.inTransaction {
            guard source.searchable else { return try db.run("DELETE FROM search_docs WHERE source = ?", [.text(source.name)]) }
            try index(source.name, source.kind, only: nil)
        }
    }

    /// Drops the documents of `source` (all, or those in the JSON array `only`) and indexes them
    /// again from the rows.
    func index(_ source: String, _ kind: SourceKind, only: String?) throws {
        let name = SQLValue.text(source)
        // The trigger on search_docs takes each document out of search_index.
        if let only {
            try db.run("DELETE FROM search_docs WHERE source = ?1 AND doc IN (SELECT value FROM json_each(?2))", [name, .text(only)])
        } else {
            try db.run("DELETE FROM search_docs WHERE source = ?", [name])
        }
        let documents = try db.cachedStatement(kind.storage.definition.search.documents(only != nil))
        defer { documents.reset() }
        try documents.bind([name] + (only.map { [SQLValue.text($0)] } ?? []))
        let addDoc = try db.cachedStatement("INSERT INTO search_docs (source, doc) VALUES (?, ?)")
        let addText = try db.cachedStatement("INSERT INTO search_index (rowid, text) VALUES (?, ?)")
        while try documents.step() {
            try addDoc.bind([name, documents.value(0)])
            try addDoc.execute()
            try addText.bind([.int(db.lastInsertRowID), documents.value(1)])
            try addText.execute()
        }
    }

    /// What differs between the index and the rows of `source`, in words; empty when they agree.
    /// A source with search off should have no documents at all.
    package func problems(_ source: String, _ kind: SourceKind, searchable: Bool = true) throws -> [String] {
        let counts = try db.query("""
            WITH wanted AS (\(searchable ? kind.storage.definition.search.documents(false) : "SELECT NULL AS doc, NULL AS text WHERE 0")),
                 held AS (SELECT d.doc, i.text FROM search_docs d LEFT JOIN search_index i ON i.rowid = d.id WHERE d.source = ?1)
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

    /// Takes out the entries `strays` counts, and rebuilds FTS5's own index from the text it
    /// holds, mending a damaged one (`cache reindex` of every source).
    package func rebuildStructure() throws {
        try db.inTransaction {
            try db.run("DELETE FROM search_index WHERE rowid NOT IN (SELECT id FROM search_docs)")
            try db.run("INSERT INTO search_index (search_index) VALUES ('rebuild')")
        }
    }

    /// Entries of the index that belong to no document (of any source).
    package func strays() throws -> [String] {
        let count = Int(try db.scalarInt("SELECT count(*) FROM search_index WHERE rowid NOT IN (SELECT id FROM search_docs)") ?? 0)
        return count > 0 ? ["\(count) entr\(count == 1 ? "y" : "ies") in the search index belonging to no source"] : []
    }

    /// FTS5's own check of its index against the text it holds; nil when they agree, or when
    /// the file cannot be opened to write or another process is writing it (the check is an
    /// `INSERT` that changes nothing, run in a transaction rolled back).
    package static func structureProblem(path: String) -> String? {
        guard let db = try? Connection(path: path) else { return nil }
        db.setBusyTimeout(milliseconds: 1000)
        guard (try? db.execute("BEGIN IMMEDIATE")) != nil else { return nil }
        defer { try? db.execute("ROLLBACK") }
        do {
            try db.execute("INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 0)")
            return nil
        } catch where error.isCorruptionOrIO {
            return "the search index is damaged (\(error.message))"
        } catch {
            return nil
        }
    }
}
