import FoundationEssentials
import Glibc

/// The `sources` table: adding, finding, listing and removing sources.
package struct SourceStore {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }

    /// Adds `source`; its rows, runs and state go with it when it is removed.
    package func add(_ source: Source) throws(CacheError) {
        let scheme = source.url.scheme?.lowercased() ?? ""
        guard Source.allowedSchemes.contains(scheme) else {
            throw .invalidSource(UpstreamError.unsafeScheme(scheme).description)
        }
        do {
            try db.inTransaction {
                guard try db.scalarInt("SELECT count(*) FROM sources WHERE name = ?", [.text(source.name)]) == 0 else {
                    throw CacheError.sourceExists(source.name)
                }
                let headers = try JSONEncoder().encode(source.headers.map(\.line))
                let created = Timestamp.now()  // also when its history starts: one moment for both
                try db.run("""
                    INSERT INTO sources (name, kind, url, mode, ttl_s, headers, token_env, max_bytes, ca_cert, max_delete,
                                         alert_after_s, created_at, rows_path, key_fields, next_page, next_param, max_pages, delimiter,
                                         first_page, has_more, since_param, cursor_field, lag_s, full_every_s,
                                         oauth_token_url, client_id_env, client_secret_env, oauth_scope, search)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(source.name), .text(source.kind.rawValue), .text(source.url.absoluteString),
                          .text(source.mode.rawValue), .int(source.ttlSeconds),
                          .text(String(decoding: headers, as: UTF8.self)), .optionalText(source.tokenEnv),
                          .optionalInt(source.maxBytes), .optionalText(source.caCert),
                          .optionalText(source.maxDelete?.description), .optionalInt(source.alertAfterSeconds),
                          .text(created)] + Self.layoutValues(source.layout) + Self.oauthValues(source.oauth)
                          + [.int(source.searchable ? 1 : 0)])
                try db.run("INSERT INTO sync_state (source) VALUES (?)", [.text(source.name)])
                // Its history starts now: a source of this name removed before was another one.
                try HistoryStore.raiseHorizon(db, source: source.name, to: created, cause: .added)
            }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// Changes the source named `name` in place: its rows, runs and run numbers stay. A new URL
    /// (another upstream) drops the validators, the last body's hash and any backoff, and marks
    /// every cached row stale (seen no later than one TTL ago) until a sync confirms it.
    /// Returns the source as it was and as it is now.
    @discardableResult
    package func update(_ name: String, _ change: (inout Source) -> Void) throws(CacheError) -> (before: Source, after: Source) {
        do {
            return try SearchIndex(db: db).mendingDamagedPages { try db.inTransaction {
                let before = try named(name)
                var after = before
                change(&after)
                guard after.kind == before.kind, after.name == before.name else {
                    throw CacheError.invalidSource("a source's name and kind cannot change")
                }
                let scheme = after.url.scheme?.lowercased() ?? ""
                guard Source.allowedSchemes.contains(scheme) else {
                    throw CacheError.invalidSource(UpstreamError.unsafeScheme(scheme).description)
                }
                let headers = try JSONEncoder().encode(after.headers.map(\.line))
                try db.run("""
                    UPDATE sources SET url = ?, mode = ?, ttl_s = ?, headers = ?, token_env = ?, max_bytes = ?, ca_cert = ?,
                                       max_delete = ?, alert_after_s = ?,
                                       rows_path = ?, key_fields = ?, next_page = ?, next_param = ?, max_pages = ?, delimiter = ?,
                                       first_page = ?, has_more = ?, since_param = ?, cursor_field = ?, lag_s = ?, full_every_s = ?,
                                       oauth_token_url = ?, client_id_env = ?, client_secret_env = ?, oauth_scope = ?, search = ?
                    WHERE name = ?
                    """, [.text(after.url.absoluteString), .text(after.mode.rawValue), .int(after.ttlSeconds),
                          .text(String(decoding: headers, as: UTF8.self)), .optionalText(after.tokenEnv),
                          .optionalInt(after.maxBytes), .optionalText(after.caCert),
                          .optionalText(after.maxDelete?.description), .optionalInt(after.alertAfterSeconds)]
                          + Self.layoutValues(after.layout) + Self.oauthValues(after.oauth) + [.int(after.searchable ? 1 : 0), .text(name)])
                // Search turned on: the rows are indexed now; turned off: the index lets them go.
                // A damaged index is recorded, never a reason to refuse the change.
                let index = SearchIndex(db: db)
                if after.searchable != before.searchable {
                    try index.keepingRows(of: name) {
                        try after.searchable ? index.index(name, after.kind, only: nil)
                                             : db.run("DELETE FROM search_docs WHERE source = ?", [.text(name)])
                    }
                }
                // Another cursor: the watermark no longer measures it; the next sync is full.
                if after.layout?.incremental?.cursorField != before.layout?.incremental?.cursorField
                    || after.layout?.incremental?.sinceParam != before.layout?.incremental?.sinceParam {
                    try db.run("UPDATE sync_state SET watermark = NULL, last_full_at = NULL WHERE source = ?", [.text(name)])
                }
                if let key = after.layout?.key, key != before.layout?.key {
                    try rekey(name, to: after.kind.keyPaths(key))
                    // The change log knows the rows by their old keys: the past before now is not
                    // asked of it any more, and the search index is made again under the new ones.
                    try HistoryStore.raiseHorizon(db, source: name, to: Timestamp.now(), cause: .rekeyed)
                    if after.searchable { try index.keepingRows(of: name) { try index.index(name, after.kind, only: nil) } }
                }
                // Another URL, or records found, keyed or split differently: nothing cached is confirmed.
                if after.url != before.url || after.layout?.rows != before.layout?.rows || after.layout?.key != before.layout?.key
                    || after.layout?.delimiter != before.layout?.delimiter {
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
            } }
        } catch {
            throw Self.cacheError(error)
        }
    }

    /// Gives every cached record of a json or csv source its key under `key`, read from the record
    /// itself, so the next sync matches records instead of replacing them all. A record without
    /// the new key, or two with the same one, refuse the change: nothing is rewritten.
    private func rekey(_ name: String, to key: [JSONPath]) throws {
        let layout = RecordLayout(key: key)
        var rekeyed: [(key: String, record: String, seenAt: String)] = []
        var seen: Set<String> = []
        for (old, record, seenAt) in try db.query("SELECT key, record, seen_at FROM records WHERE source = ?", [.text(name)], row: {
            ($0.text(0) ?? "", $0.text(1) ?? "{}", $0.text(2) ?? "")
        }) {
            let page: RecordPage
            do { page = try RecordDecoder.decode(Data(record.utf8), layout: layout) } catch {
                throw CacheError.invalidSource("the cached record \(old) has no \(layout.keyDescription) to be its key; the key stays as it was")
            }
            let new = page.records.key(0)
            guard seen.insert(new).inserted else {
                throw CacheError.invalidSource("two cached records have the key \(new) under \(layout.keyDescription); the key stays as it was")
            }
            rekeyed.append((new, record, seenAt))
        }
        try db.run("DELETE FROM records WHERE source = ?", [.text(name)])
        for record in rekeyed {
            try db.run("INSERT INTO records (source, key, record, seen_at) VALUES (?, ?, ?, ?)",
                       [.text(name), .text(record.key), .text(record.record), .text(record.seenAt)])
        }
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
            return try SearchIndex(db: db).mendingDamagedPages { try db.inTransaction {
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
            } }
        } catch {
            throw Self.cacheError(error)
        }
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

    private static func source(_ row: Statement) throws -> Source {
        let name = row.text(0) ?? ""
        guard let kind = SourceKind(rawValue: row.text(1) ?? ""),
              let url = URL(string: row.text(2) ?? ""),
              let mode = SyncMode(rawValue: row.text(3) ?? "")
        else { throw CacheError.invalidSource("the stored definition of '\(name)' is damaged") }
        let headerLines = (try? JSONDecoder().decode([String].self, from: Data((row.text(5) ?? "[]").utf8))) ?? []
        var source = Source(name: name, kind: kind, url: url, mode: mode, ttlSeconds: row.int(4),
                      headers: headerLines.compactMap(Source.Header.init(line:)),
                      tokenEnv: row.text(6), maxBytes: row.isNull(7) ? nil : row.int(7), caCert: row.text(8))
        source.identity = row.text(9)
        // Headers stored before today's header check that fail it are not sent; their names are
        // kept so `sources list` can say so (a value may be a secret: it is never shown).
        source.unsentHeaders = headerLines.filter { Source.Header(line: $0) == nil }
            .map { line in String(line.prefix { $0 != ":" }).trimmingSpaces() }
        source.maxDelete = row.text(10).flatMap(RemovalLimit.init)
        if let tokenURL = row.text(24).flatMap(URL.init(string:)), let id = row.text(25), let secret = row.text(26) {
            source.oauth = Source.OAuthClient(tokenURL: tokenURL, clientIDEnv: id, clientSecretEnv: secret, scope: row.text(27))
        }
        source.alertAfterSeconds = row.isNull(11) ? nil : row.int(11)
        source.searchable = row.int(28) != 0
        if kind.keepsRecords {
            guard let rows = JSONPath(row.text(12) ?? "$"),
                  let key = row.text(13).map({ JSONPath.fields($0).compactMap { $0 } }), !key.isEmpty
            else { throw CacheError.invalidSource("the stored definition of '\(name)' is damaged") }
            source.layout = RecordLayout(rows: rows, key: key, next: row.text(14).flatMap(RecordLayout.NextPage.init),
                                         nextParam: row.text(15), maxPages: row.isNull(16) ? RecordLayout.defaultMaxPages : row.int(16),
                                         delimiter: row.text(17).flatMap(RecordLayout.delimiter))
            source.layout?.firstPage = row.isNull(18) ? nil : row.int(18)
            source.layout?.hasMore = row.text(19).flatMap(JSONPath.init)
            if let parameter = row.text(20), let field = row.text(21).flatMap(JSONPath.init) {
                source.layout?.incremental = RecordLayout.Incremental(
                    sinceParam: parameter, cursorField: field, lagSeconds: row.isNull(22) ? 0 : row.int(22),
                    fullEverySeconds: row.isNull(23) ? RecordLayout.Incremental.defaultFullEvery : row.int(23))
            }
        }
        return source
    }

    /// The layout's columns, in the order `columns` lists them after alert_after_s.
    private static func layoutValues(_ layout: RecordLayout?) -> [SQLValue] {
        [.optionalText(layout?.rows.description), .optionalText(layout?.keyDescription), .optionalText(layout?.next?.description),
         .optionalText(layout?.nextParam), .optionalInt(layout?.maxPages), .optionalText(layout?.delimiter.map(RecordLayout.delimiterText)),
         .optionalInt(layout?.firstPage), .optionalText(layout?.hasMore?.description),
         .optionalText(layout?.incremental?.sinceParam), .optionalText(layout?.incremental?.cursorField.dotted),
         .optionalInt(layout?.incremental?.lagSeconds), .optionalInt(layout?.incremental?.fullEverySeconds)]
    }

    /// The OAuth2 client's columns, after the layout's.
    private static func oauthValues(_ client: Source.OAuthClient?) -> [SQLValue] {
        [.optionalText(client?.tokenURL.absoluteString), .optionalText(client?.clientIDEnv),
         .optionalText(client?.clientSecretEnv), .optionalText(client?.scope)]
    }

    /// The columns `source(_:)` reads, in its order.
    private static let columns = "name, kind, url, mode, ttl_s, headers, token_env, max_bytes, ca_cert, \(identitySQL), max_delete, alert_after_s, rows_path, key_fields, next_page, next_param, max_pages, delimiter, first_page, has_more, since_param, cursor_field, lag_s, full_every_s, oauth_token_url, client_id_env, client_secret_env, oauth_scope, search"

    /// Any error of this store as a `CacheError`, SQLite's kept as they are.
    private static func cacheError(_ error: Error) -> CacheError {
        switch error {
        case let error as CacheError: error
        case let error as DatabaseError: .database(error)
        default: .invalidSource("\(error)")
        }
    }

    /// `Source.identity` as SQL over the `sources` table: the row, and the settings that decide
    /// what a sync writes (a sync begun before `sources set` changed them must not land).
    static let identitySQL = "rowid || ':' || created_at || ':' || mode || ':' || url || ':' || coalesce(rows_path, '') || ':' || coalesce(key_fields, '') || ':' || coalesce(delimiter, '') || ':' || coalesce(max_delete, '') || ':' || coalesce(since_param, '') || ':' || coalesce(cursor_field, '')"
}
