import FoundationEssentials

/// What a reader over HTTP needs to validate and date a source's rows (`cache serve`'s `ETag`,
/// `Last-Modified`, `Age` and `Cache-Control`), read in one query and never from the rows.
package struct RowsVersion: Sendable, Equatable {
    /// Changes whenever the rows could: another source of the name, a change of settings that
    /// decides what syncs write, a run that changed them, an unconfirmation (`sources set`), a
    /// local edit (its overlay's version).
    /// Not a run that only confirmed them, nor the clock: `cache serve`'s validator adds the
    /// confirmation and the staleness to it (`Freshness.etag`), and its headers (`Age`,
    /// `Cache-Control`, `Cache-Status`) say how fresh the rows are.
    package var tag: String { syncedTag + "|" + String(edited) }
    /// The part of `tag` that changes with the synced rows themselves (the table, not the
    /// overlay of local edits): what a `RowCensus` counts.
    package var syncedTag: String
    /// The overlay's version: changes with every local edit.
    var edited: Int
    /// When a run last changed the rows (`updated`), in the stored form.
    package var changedAt: String?
    /// When upstream last confirmed the rows (the last success), in the stored form.
    package var lastSuccessAt: String?
    /// Seconds since upstream last confirmed the rows (the last success); nil before any.
    package var ageSeconds: Int?
    package var ttlSeconds: Int
    /// Never synced, or the last success is older than the TTL.
    package var stale: Bool
    /// The newest run of the source, of any outcome (for events).
    package var lastRun: Int?

    /// Seconds left before the rows go stale (0 when they are).
    package var freshFor: Int { stale ? 0 : max(0, ttlSeconds - (ageSeconds ?? ttlSeconds)) }
}

extension CacheReader {
    package func rowsVersion(of source: Source) throws -> RowsVersion {
        let row = try db.query("""
            SELECT (SELECT max(id) FROM sync_runs WHERE source = ?1 AND outcome = 'updated'),
                   (SELECT max(finished_at) FROM sync_runs WHERE source = ?1 AND outcome = 'updated'),
                   (SELECT count(*) FROM unconfirmations WHERE source = ?1),
                   (SELECT max(id) FROM sync_runs WHERE source = ?1),
                   CAST((julianday('now') - julianday(st.last_success_at)) * 86400 AS INTEGER),
                   st.last_success_at IS NULL OR (julianday('now') - julianday(st.last_success_at)) * 86400 > ?2,
                   st.last_success_at,
                   (SELECT version FROM overlay_versions WHERE source = ?1)
            FROM (SELECT 1) LEFT JOIN sync_state st ON st.source = ?1
            """, [.text(source.name), .int(source.ttlSeconds)]) { row in
            (written: row.isNull(0) ? nil : row.int(0), changedAt: row.text(1), unconfirmed: row.int(2),
             lastRun: row.isNull(3) ? nil : row.int(3), age: row.isNull(4) ? nil : row.int(4), stale: row.isNull(5) || row.int(5) != 0, lastSuccessAt: row.text(6),
             edited: row.int(7))
        }.first!
        let tag = [source.identity ?? source.name, String(row.written ?? 0), String(row.unconfirmed)].joined(separator: "|")
        return RowsVersion(syncedTag: tag, edited: row.edited, changedAt: row.changedAt, lastSuccessAt: row.lastSuccessAt, ageSeconds: row.age, ttlSeconds: source.ttlSeconds,
                           stale: row.stale, lastRun: row.lastRun)
    }
}
