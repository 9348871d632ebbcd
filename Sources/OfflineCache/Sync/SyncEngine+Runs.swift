import FoundationEssentials

/// A sync's bookkeeping: the run it records in the history, a failure or a hold and what they
/// mean for the next try, and the state it reads before it fetches.
extension SyncEngine {
    /// Inserts the run into the history and returns its id.
    @discardableResult
    func record(_ run: Run, finishedAt: String = Timestamp.now()) throws -> Int64 {
        let report = run.report
        try db.run("""
            INSERT INTO sync_runs (source, started_at, finished_at, outcome, inserted, updated, deleted,
                                   http_status, bytes, error, note, attempts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(report.source), .text(run.startedAt), .text(finishedAt), .text(report.outcome.rawValue),
                  .int(report.counts.inserted), .int(report.counts.updated), .int(report.counts.deleted),
                  .optionalInt(report.httpStatus), .optionalInt(report.bytes),
                  .optionalText(report.errorText), .optionalText(report.note), .int(report.attempts)])
        return db.lastInsertRowID
    }

    /// Records a failed run and sets when cron may try again. Best effort: the failure being
    /// reported matters more than a failure to record it.
    func recordFailure(_ run: inout Run, state: SyncState, options: Options, retryAfter: Double?, longest: Double? = nil) {
        run.report.outcome = .failed
        guard !options.plan else { return }  // a plan writes nothing, its failures included
        let failures = state.failures + 1
        var delay = options.failureBackoff.delay(afterFailures: failures)
        // A server's Retry-After is honoured up to the backoff's cap (an hour), so a far-future
        // date cannot stop background refresh for good.
        if let retryAfter { delay = min(max(delay, retryAfter), longest ?? options.failureBackoff.cap) }
        let now = Date()
        let next = Timestamp.format(now.addingTimeInterval(delay))
        run.report.nextAttemptAt = next
        let finished = run
        try? db.inTransaction {
            try record(finished, finishedAt: Timestamp.format(now))
            try db.run("""
                UPDATE sync_state SET last_attempt_at = ?, last_outcome = 'failed', last_error = ?,
                    failures = ?, next_attempt_at = ?
                WHERE source = ?
                """, [.text(Timestamp.format(now)), .optionalText(finished.report.errorText), .int(failures),
                      .text(next), .text(finished.report.source)])
        }
    }

    /// A held sync is recorded as such: not a failure (no count, no growing backoff), since
    /// upstream answered and it needs a person, not waiting. Cron and readers ask again once a
    /// TTL has passed, not every minute: the same answer would be held again.
    ///
    /// A held full sweep of an incremental source is remembered (`sweep_held`): the next sync
    /// sweeps again, and `--accept-removals` applies it, however it was asked for.
    func recordHeld(_ run: inout Run, askAgainIn seconds: Int, fullSweep: Bool) {
        run.report.outcome = .held
        let finished = run
        let now = Date()
        let next = Timestamp.format(now.addingTimeInterval(Double(seconds)))
        run.report.nextAttemptAt = next
        try? db.inTransaction {
            try record(finished, finishedAt: Timestamp.format(now))
            try db.run("""
                UPDATE sync_state SET last_attempt_at = ?, last_outcome = 'held', last_error = ?, next_attempt_at = ?,
                    sweep_held = CASE WHEN ? THEN 1 ELSE sweep_held END
                WHERE source = ?
                """, [.text(Timestamp.format(now)), .optionalText(finished.report.errorText), .text(next), .int(fullSweep ? 1 : 0),
                      .text(finished.report.source)])
        }
    }
}

/// One sync in progress: its report and its clock.
struct Run {
    var report: SyncReport
    let startedAt: String
    let clock = ContinuousClock.now

    init(source: Source, startedAt: String) {
        report = SyncReport(source: source.name, outcome: .failed)
        self.startedAt = startedAt
    }

    func finished() -> SyncReport {
        var report = report
        report.durationMs = Int((ContinuousClock.now - clock) / .milliseconds(1))
        return report
    }

    /// The source was removed while this sync ran: skipped, nothing written or recorded.
    mutating func removed() -> SyncReport {
        report.outcome = .skipped
        report.counts = ChangeCounts()
        report.note = "the source was removed during the sync; nothing was written"
        return finished()
    }

    mutating func failed(_ failure: SyncReport.Failure) -> SyncReport {
        report.outcome = .failed
        report.failure = failure
        return finished()
    }
}

/// The bookkeeping of one source that a sync reads before it fetches.
struct SyncState {
    var etag: String?
    var lastModified: String?
    var bodyHash: String?
    var failures = 0
    var nextAttemptAt: String?
    /// An incremental source's largest cursor field, and when it last synced in full.
    var watermark: String?
    var lastFullAt: String?
    /// The removal guard held a full sweep, and none has landed since.
    var sweepHeld = false
    /// How the last sync ended (`held`, `failed`, …).
    var lastOutcome: String?

    static func load(_ db: Connection, source: String) throws -> SyncState {
        try db.query("""
            SELECT etag, last_modified, body_hash, failures, next_attempt_at, watermark, last_full_at, sweep_held, last_outcome
            FROM sync_state WHERE source = ?
            """, [.text(source)]) {
            SyncState(etag: $0.text(0), lastModified: $0.text(1), bodyHash: $0.text(2), failures: $0.int(3),
                      nextAttemptAt: $0.text(4), watermark: $0.text(5), lastFullAt: $0.text(6), sweepHeld: $0.int(7) == 1,
                      lastOutcome: $0.text(8))
        }.first ?? SyncState()
    }
}
