import FoundationEssentials

/// How many of a source's rows were last seen at each moment: enough to count its rows, and its
/// stale rows at any later moment, without reading a row. A sync writes one `seen_at` for the
/// rows it touched, so a census has about one entry a sync, however many rows there are.
package struct RowCensus: Sendable {
    /// The rows' version it counts (`RowsVersion.syncedTag` and the newest run: local edits do
    /// not change it).
    package let version: String
    /// Rows by the moment they were last seen, oldest first.
    private let seen: [(at: String, rows: Int)]
    package let rows: Int

    /// Counts the source's rows by `seen_at`: one pass over them, as `status` counting them makes.
    package init(_ database: CacheDatabase, of source: Source, version: String) throws {
        self.version = version
        seen = try database.connection.query("""
            SELECT seen_at, count(*) FROM \(source.kind.storage.rowTable) WHERE source = ? GROUP BY seen_at ORDER BY seen_at
            """, [.text(source.name)]) { (at: $0.text(0) ?? "", rows: $0.int(1)) }
        rows = seen.reduce(0) { $0 + $1.rows }
    }

    /// The rows stale at `now`, as `CacheReader.status` counts them on the table: those for which
    /// the later of their `seen_at` and the source's `confirmedAt` is older than the TTL.
    package func staleRows(confirmedAt: String?, ttlSeconds: Int, at now: Date = Date()) -> Int {
        let cutoff = Timestamp.format(now.addingTimeInterval(-Double(ttlSeconds)))
        if let confirmedAt, confirmedAt >= cutoff { return 0 }
        return seen.prefix { $0.at < cutoff }.reduce(0) { $0 + $1.rows }
    }

    /// The census of each source, by file, kept for the rows' version it was taken at: between
    /// syncs, counting a source's rows and stale rows costs the same on a million rows as on ten.
    /// `cache serve` takes a new one when its watcher sees a sync land (`take`), so the requests
    /// that follow (`/sources`, `/metrics`, a load balancer's polls) find it ready.
    package final class Kept: Sendable {
        private let censuses = Locked<[String: RowCensus]>([:])
        private let counted = Locked(0)
        /// How many censuses were taken (each one a pass over a source's rows).
        package var taken: Int { counted.value }

        package init() {}

        /// The source's census for its rows as they are now in `database`: the kept one while the
        /// rows' version is the same, else a new one, kept.
        package func census(_ database: CacheDatabase, of source: Source) throws -> RowCensus {
            // Any run may have moved seen_at (a merge sync that changed nothing still marks the
            // rows it saw), so the newest run is part of the version.
            let rows = try CacheReader(database).rowsVersion(of: source)
            let version = rows.syncedTag + "|" + String(rows.lastRun ?? 0)
            let key = database.path + "\u{0}" + source.name
            if let kept = censuses.withLock({ $0[key] }), kept.version == version { return kept }
            let census = try RowCensus(database, of: source, version: version)
            counted.withLock { $0 += 1 }
            censuses.withLock { $0[key] = census }
            return census
        }

        /// Takes the census of these sources (a sync of each has landed), reading one snapshot.
        package func take(_ database: CacheDatabase, sources: some Sequence<String>) {
            let store = SourceStore(database)
            for name in Set(sources) {
                _ = try? database.connection.inReadTransaction { try census(database, of: try store.named(name)) }
            }
        }
    }
}
