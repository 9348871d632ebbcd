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
}
