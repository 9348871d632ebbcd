import FoundationEssentials
import Synchronization

/// The `sources` table: adding, finding, listing and removing sources.
package struct SourceStore {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }

    /// Adds `source`; its rows, runs and state go with it when it is removed.
    package func add(_ source: Source) throws(CacheError) {
        do {
            try db.inTransaction { try inserting(source) }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// `add`'s work, inside the caller's transaction.
    func inserting(_ source: Source) throws {
        let scheme = source.url.scheme?.lowercased() ?? ""
        guard Source.allowedSchemes.contains(scheme) else {
            throw CacheError.invalidSource(UpstreamError.unsafeScheme(scheme).description)
        }
        guard try db.scalarInt("SELECT count(*) FROM sources WHERE name = ?", [.text(source.name)]) == 0 else {
            throw CacheError.sourceExists(source.name)
        }
        let created = Timestamp.now()  // also when its history starts: one moment for both
        try db.run("""
            INSERT INTO sources (name, kind, url, mode, ttl_s, search, created_at, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(source.name), .text(source.kind.rawValue), .text(source.url.absoluteString),
                  .text(source.mode.rawValue), .int(source.ttlSeconds), .int(source.searchable ? 1 : 0),
                  .text(created), .text(Self.storedSettings(of: source))])
        try db.run("INSERT INTO sync_state (source) VALUES (?)", [.text(source.name)])
        // Its history starts now: a source of this name removed before was another one.
        try HistoryStore.raiseHorizon(db, source: source.name, to: created, cause: .added)
    }

    /// Changes the source named `name` by `settings`, checked against the source as it is inside
    /// the change's transaction (see `update`).
    @discardableResult
    package func update(_ name: String, by settings: SourceSettings) throws(CacheError) -> (before: Source, after: Source) {
        try update(name) { source in source = try settings.changing(source) }
    }

    /// Changes the source named `name` in place: its rows, runs and run numbers stay. A new URL
    /// (another upstream) drops the validators, the last body's hash and any backoff, and marks
    /// every cached row stale (seen no later than one TTL ago) until a sync confirms it.
    /// Returns the source as it was and as it is now.
    @discardableResult
    package func update(_ name: String, _ change: (inout Source) throws -> Void) throws(CacheError) -> (before: Source, after: Source) {
        do {
            return try SearchIndex(db: db).mendingDamagedPages { try db.inTransaction { try updating(name, change) } }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// `update`'s work, inside the caller's transaction.
    func updating(_ name: String, _ change: (inout Source) throws -> Void) throws -> (before: Source, after: Source) {
        let before = try named(name)
        var after = before
        try change(&after)
        guard after.kind == before.kind, after.name == before.name else {
            throw CacheError.invalidSource("a source's name and kind cannot change")
        }
        let scheme = after.url.scheme?.lowercased() ?? ""
        guard Source.allowedSchemes.contains(scheme) else {
            throw CacheError.invalidSource(UpstreamError.unsafeScheme(scheme).description)
        }
        try db.run("UPDATE sources SET url = ?, mode = ?, ttl_s = ?, search = ?, settings = ? WHERE name = ?",
                   [.text(after.url.absoluteString), .text(after.mode.rawValue), .int(after.ttlSeconds),
                    .int(after.searchable ? 1 : 0), .text(Self.storedSettings(of: after)), .text(name)])
        // What else the change does, as each option declares it.
        let changed = { (effect: SourceOption.Effects) in
            after.kind.options.contains { $0.effects.contains(effect) && $0.text(before) != $0.text(after) }
        }
        // Search turned on: the rows are indexed when first searched; turned off: the index lets
        // them go. A damaged index is recorded, never a reason to refuse the change.
        let index = SearchIndex(db: db)
        if before.searchable && !after.searchable {
            try index.keepingRows(of: name) { try db.run("DELETE FROM search_docs WHERE source = ?", [.text(name)]) }
            try db.run("DELETE FROM search_built WHERE source = ?", [.text(name)])
        }
        // Another cursor: the watermark no longer measures it; the next sync is full.
        if changed(.resetsWatermark) {
            try db.run("UPDATE sync_state SET watermark = NULL, last_full_at = NULL WHERE source = ?", [.text(name)])
        }
        if changed(.rekeys), let key = after.layout?.key {
            try after.kind.storage.definition.rekey(db, source: name, to: after.kind.keyPaths(key))
            // The change log knows the rows by their old keys: the past before now is not
            // asked of it any more, and the search index is made again under the new ones.
            try HistoryStore.raiseHorizon(db, source: name, to: Timestamp.now(), cause: .rekeyed)
            if try index.isBuilt(name) { try index.keepingRows(of: name) { try index.index(name, after.kind, only: nil) } }
        }
        // Another URL, or records found, keyed or split differently: nothing cached is confirmed.
        if changed(.unconfirms) {
            try db.run("""
                UPDATE sync_state SET etag = NULL, last_modified = NULL, body_hash = NULL, confirmed_at = NULL,
                                      failures = 0, next_attempt_at = NULL, watermark = NULL, last_full_at = NULL
                WHERE source = ?
                """, [.text(name)])
            try db.run("INSERT INTO unconfirmations (source, unconfirmed_at) VALUES (?, ?)", [.text(name), .text(Timestamp.now())])
            // Rows no later than one TTL (and a second) ago: stale now, whatever the TTL.
            let unconfirmed = "min(seen_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (?2 + 1) || ' seconds'))"
            for table in RowStorage.allCases.flatMap(\.cachedTables) {
                try db.run("UPDATE \(table) SET seen_at = \(unconfirmed) WHERE source = ?1",
                           [.text(name), .int(after.ttlSeconds)])
            }
        }
        return (before, try named(name))
    }

    /// True when the source has never synced, or its last success is older than its TTL (see
    /// `CacheReader.isStale`; the sync's `--if-stale` asks here).
    func isStale(_ source: Source) throws -> Bool {
        try db.scalarInt("""
            SELECT last_success_at IS NULL OR (julianday('now') - julianday(last_success_at)) * 86400 > ?
            FROM sync_state WHERE source = ?
            """, [.int(Int64(source.ttlSeconds)), .text(source.name)]) ?? 1 != 0
    }

    /// An incremental source's watermark and the time of its last full sync.
    package func watermark(of name: String) throws -> (watermark: String?, lastFullAt: String?) {
        try db.query("SELECT watermark, last_full_at FROM sync_state WHERE source = ?", [.text(name)]) {
            ($0.text(0), $0.text(1))
        }.first ?? (nil, nil)
    }

    /// When each source was added, by name (in the stored form).
    package func addedAt() throws -> [String: String] {
        Dictionary(try db.query("SELECT name, created_at FROM sources") { ($0.text(0) ?? "", $0.text(1) ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    package func all() throws(CacheError) -> [Source] {
        do {
            return try db.query("""
                SELECT \(Self.columns) FROM sources ORDER BY name
                """, row: Self.source)
        } catch { throw Self.cacheError(error) }
    }

    package func named(_ name: String) throws(CacheError) -> Source {
        let found: [Source]
        do {
            found = try db.query("""
                SELECT \(Self.columns) FROM sources WHERE name = ?
                """, [.text(name)], row: Self.source)
        } catch { throw Self.cacheError(error) }
        guard let source = found.first else { throw .noSuchSource(name) }
        return source
    }

    /// What a source takes with it when removed.
    package struct Belongings: Sendable, Equatable {
        package var rows: Int
        package var runs: Int
    }

    /// What removing `name` would take with it.
    package func belongings(of name: String) throws(CacheError) -> Belongings {
        do {
            return try db.inReadTransaction { try counted(name) }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// Removes the source with its rows, runs and state; returns what went with it.
    @discardableResult
    package func remove(_ name: String) throws(CacheError) -> Belongings {
        do {
            return try SearchIndex(db: db).mendingDamagedPages { try db.inTransaction { try removing(name) } }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// `remove`'s work, inside the caller's transaction.
    func removing(_ name: String) throws -> Belongings {
        let gone = try counted(name)
        try RecordView.drop(db, source: name)
        // Its documents leave the index first: a damaged index that cannot let them go
        // is made again, without them, rather than keeping the source.
        let index = SearchIndex(db: db)
        try index.keepingRows(of: name) { try db.run("DELETE FROM search_docs WHERE source = ?", [.text(name)]) }
        if try db.scalarInt("SELECT EXISTS (SELECT 1 FROM search_docs WHERE source = ?)", [.text(name)]) == 1 {
            try db.run("UPDATE sources SET search = 0 WHERE name = ?", [.text(name)])
            try index.remake()
        }
        try db.run("DELETE FROM sources WHERE name = ?", [.text(name)])
        if db.changes == 0 { throw CacheError.noSuchSource(name) }
        return gone
    }

    /// The counts behind `belongings`, inside the caller's transaction.
    private func counted(_ name: String) throws -> Belongings {
        guard try db.scalarInt("SELECT count(*) FROM sources WHERE name = ?", [.text(name)]) == 1 else {
            throw CacheError.noSuchSource(name)
        }
        let rows = try RowStorage.allCases.flatMap(\.cachedTables).reduce(0) { total, table in
            total + Int(try db.scalarInt("SELECT count(*) FROM \(table) WHERE source = ?", [.text(name)]) ?? 0)
        }
        let runs = Int(try db.scalarInt("SELECT count(*) FROM sync_runs WHERE source = ?", [.text(name)]) ?? 0)
        return Belongings(rows: rows, runs: runs)
    }

    /// Sources made from their stored rows, by the row's text: `cache serve` reads one on every
    /// request, and checking its settings is most of that read's cost. A row that changes is a
    /// new key; the whole memo goes past `madeLimit` entries.
    private static let made = Locked<[String: Source]>([:])
    private static let madeLimit = 256

    /// A source from its row (`columns`), made once per row's text (`made`).
    private static func source(_ row: Statement) throws -> Source {
        let columns = (0..<8).map { row.text($0) ?? "\u{1}" }
        let key = columns.joined(separator: "\u{0}")
        if let source = made.withLock({ $0[key] }) { return source }
        let source = try madeSource(row)
        made.withLock { memo in
            if memo.count >= madeLimit { memo.removeAll() }
            memo[key] = source
        }
        return source
    }

    /// A source from its row: the settings document with the columns beside it, read by the
    /// options' declarations as the cache stored them.
    private static func madeSource(_ row: Statement) throws -> Source {
        let name = row.text(0) ?? ""
        let damaged = CacheError.invalidSource("the stored definition of '\(name)' is damaged")
        guard let kind = SourceKind(rawValue: row.text(1) ?? ""),
              var settings = try? SourceSettings(json: Data((row.text(7) ?? "").utf8))
        else { throw damaged }
        settings[.url] = .text(row.text(2) ?? "")
        settings[.mode] = .text(row.text(3) ?? "")
        settings[.ttl] = .text(String(row.int(4)))
        if row.int(5) == 0 { settings[.search] = "off" }
        var source: Source
        do { source = try kind.source(named: name, settings, new: []) } catch { throw damaged }
        source.identity = row.text(6)
        return source
    }

    /// The settings document of `source`: its options away from their defaults, but for those
    /// kept in columns of their own.
    static func storedSettings(of source: Source) -> String {
        var settings = source.kind.settings(of: source)
        for option in columnOptions { settings[option] = nil }
        return settings.json()
    }

    /// The options SQL reads, each a column of `sources`.
    private static let columnOptions: [SourceOption] = [.url, .mode, .ttl, .search]

    /// The columns `source(_:)` reads, in its order.
    private static let columns = "name, kind, url, mode, ttl_s, search, \(identitySQL), settings"

    /// Any error of this store as a `CacheError`, SQLite's kept as they are.
    static func cacheError(_ error: Error) -> CacheError {
        switch error {
        case let error as CacheError: error
        case let error as DatabaseError: .database(error)
        default: .invalidSource("\(error)")
        }
    }

    /// `Source.identity` as SQL over the `sources` table: the row, and the settings that decide
    /// what a sync writes (a sync begun before `sources set` changed them must not land): those
    /// whose declarations say a change aborts a sync.
    static let identitySQL: String = {
        let stored = SourceOption.all.filter { $0.effects.contains(.abortsSync) && !columnOptions.contains($0) }
        return (["rowid", "created_at", "mode", "url"] + stored.map { "coalesce(json_extract(settings, '$.\"\($0.name)\"'), '')" })
            .joined(separator: " || ':' || ")
    }()
}
