import FoundationEssentials

/// Incremental json sources: only what changed since the watermark is asked for and merged;
/// the first sync, one every --full-every and one on --full are whole.
extension SyncEngine {
    /// The `since` value this sync sends (nil for a full sync) and the run's note saying which.
    static func incrementalStep(_ incremental: RecordLayout.Incremental, state: SyncState, full: Bool) -> (since: String?, note: String) {
        let sweepDue = state.lastFullAt.flatMap(Timestamp.parse).map { -$0.timeIntervalSinceNow >= Double(incremental.fullEverySeconds) } ?? true
        guard !full, !sweepDue, let watermark = state.watermark else { return (nil, "full sweep") }
        let since = incremental.since(watermark)
        return (since, "incremental: \(incremental.sinceParam)=\(since)")
    }

    /// After a sync lands (in its transaction): the watermark is the largest cursor field
    /// cached (SQLite's order: numbers, then text), and a full sync is the last full one.
    func recordWatermark(_ incremental: RecordLayout.Incremental, source: String, fullSync: Bool, at now: String) throws {
        try db.run("""
            UPDATE sync_state SET
                watermark = coalesce((SELECT CAST(value AS TEXT) FROM (SELECT json_extract(record, ?1) AS value
                                      FROM records WHERE source = ?2) WHERE value IS NOT NULL ORDER BY value DESC LIMIT 1),
                                     watermark),
                last_full_at = CASE WHEN ?3 THEN ?4 ELSE last_full_at END
            WHERE source = ?2
            """, [.text(incremental.cursorField.sqlitePath), .text(source), .int(fullSync ? 1 : 0), .text(now)])
    }
}
