import FoundationEssentials

/// Incremental json sources: only what changed since the watermark is asked for and merged;
/// the first sync, one every --full-every and one on --full are whole.
extension SyncEngine {
    /// The `since` value this sync sends (nil for a full sync) and the run's note saying which.
    static func incrementalStep(_ incremental: RecordLayout.Incremental, state: SyncState, full: Bool) -> (since: String?, note: String) {
        // A full sweep the removal guard held stays due until one lands, as a held --full-every
        // sweep does: so 'sync --accept-removals', which the held message names, applies it.
        // A clock that was once ahead leaves last_full_at in the future: due, not suppressed.
        let sweepDue = state.sweepHeld || state.lastFullAt.flatMap(Timestamp.parse).map {
            let age = -$0.timeIntervalSinceNow
            return age < 0 || age >= Double(incremental.fullEverySeconds)
        } ?? true
        guard !full, !sweepDue, let watermark = state.watermark else { return (nil, "full sweep") }
        let since = incremental.since(watermark)
        return (since, "incremental: \(incremental.sinceParam)=\(since)")
    }

    /// The longest watermark sent back in a URL: past this, servers and libcurl refuse the
    /// request line, and the sync would say it cannot reach upstream, for good.
    static let longestWatermark = 8192

    /// A watermark that no URL can carry is bad data upstream sent (a cursor field of a
    /// megabyte), said as such before any request; `sync --full` asks without it.
    static func checkSendable(_ since: String, of incremental: RecordLayout.Incremental) throws(UpstreamError) {
        let length = since.utf8.count
        guard length > longestWatermark else { return }
        throw .badData("the watermark from \(incremental.cursorField.dotted) is \(length) bytes long, more than a URL can carry (\(longestWatermark)); 'cache sync --full' syncs without it")
    }

    /// After a sync lands (in its transaction): the watermark is the largest cursor field
    /// cached (SQLite's order: numbers, then text), and a full sync is the last full one (which
    /// also applies a held full sweep: `sweep_held` is cleared).
    ///
    /// The watermark is kept as the record holds it, never through a REAL: a number as its JSON
    /// text (`1700000000.123456` keeps its 16 digits, an integer above 2^63 every digit), a
    /// string unquoted. Numbers that tie as REALs (integers past 2^53) are told apart by their
    /// text's length, then its bytes: right for non-negative integers; for fractions or negatives
    /// that tie, the smaller may be kept, which only asks for a little more again.
    func recordWatermark(_ incremental: RecordLayout.Incremental, source: String, fullSync: Bool, at now: String) throws {
        try db.run("""
            UPDATE sync_state SET
                watermark = coalesce((SELECT CASE WHEN typeof(value) = 'text' THEN value ELSE raw END
                                      FROM (SELECT json_extract(record, ?1) AS value, record -> ?1 AS raw
                                            FROM records WHERE source = ?2)
                                      WHERE value IS NOT NULL ORDER BY value DESC, length(raw) DESC, raw DESC LIMIT 1),
                                     watermark),
                last_full_at = CASE WHEN ?3 THEN ?4 ELSE last_full_at END,
                sweep_held = CASE WHEN ?3 THEN 0 ELSE sweep_held END
            WHERE source = ?2
            """, [.text(incremental.cursorField.sqlitePath), .text(source), .int(fullSync ? 1 : 0), .text(now)])
    }
}
