import FoundationEssentials
import Dispatch

/// Fetches sources and reconciles them into the cache.
///
/// One sync is one straight path: take the source's lease → fetch (conditional headers,
/// retrying what can succeed later) → decode and validate the whole body, under the sync's
/// deadline and holding no lock → one `BEGIN IMMEDIATE` transaction that reconciles the rows and
/// records the run → release. A bad body fails before the transaction starts. A failure at any
/// step writes only the failed run and the source's backoff state; the cached rows stay as
/// they were.
package struct SyncEngine {
    package struct Options: Sendable {
        /// Skip sources still within their TTL, or backing off after failures (the cron form).
        package var onlyIfStale = false
        /// The whole sync of one source: every attempt and the waits between them.
        package var timeout = FetchRequest.defaultTimeout
        /// Requests per sync, the first included.
        package var maxAttempts = 3
        package var retryBackoff = Backoff.retry
        package var failureBackoff = Backoff.betweenSyncs
        /// A Retry-After longer than this ends the sync instead of waiting inside it.
        package var longestRetryWait: Double = 30
        /// Told how a long sync advances: bytes downloaded, then rows reconciled.
        package var progress: (@Sendable (SyncProgress) -> Void)?
        /// Reconcile and report what would change, then roll it all back (`sync --plan`).
        package var plan = false
        /// Apply a sync the removal guard would hold, this once (`sync --accept-removals`).
        package var acceptRemovals = false
        /// An incremental source syncs in full, removing what upstream no longer has (`sync --full`).
        package var full = false
        /// Shared by syncs running at once in this process, so their writes go one at a time
        /// (SQLite would serialise them too, but by polling its busy timeout).
        package var writeGate: WriteGate?

        package init(onlyIfStale: Bool = false, timeout: Double = FetchRequest.defaultTimeout) {
            self.onlyIfStale = onlyIfStale
            self.timeout = timeout
        }
    }

    let database: CacheDatabase
    let fetcher: any Fetching
    let environment: [String: String]
    /// Waits between retries; a seam so unit tests need not sleep.
    var sleep: (Double) -> Void = { sleepSeconds($0) }

    package init(database: CacheDatabase, fetcher: any Fetching = Fetcher(),
                environment: [String: String] = processEnvironment()) {
        self.database = database
        self.fetcher = fetcher
        self.environment = environment
    }

    var db: Connection { database.connection }

    /// Syncs one source and reports what happened; it throws only for an unknown source.
    package func sync(_ name: String, options: Options = Options()) throws(CacheError) -> SyncReport {
        let source = try SourceStore(database).named(name)
        return sync(source, options: options)
    }

    package func sync(_ source: Source, options: Options = Options()) -> SyncReport {
        var run = Run(source: source, startedAt: Timestamp.now())
        let deadline = ContinuousClock.now + .milliseconds(Int64(options.timeout * 1000))

        // One sync per source at a time. The lease outlives the fetch's deadline, with room to write.
        let lease = SyncLease(database)
        let token: String
        do {
            let longest = options.timeout + 60
            switch try lease.acquire(source.name, for: longest) {
            case .held(let pid):
                run.report.outcome = .skipped
                run.report.note = "already syncing, pid \(pid)"
                if !options.plan { _ = try? db.inTransaction { try record(run) } }
                return run.finished()
            case .acquired(let acquired):
                token = acquired
            }
        } catch {
            // The source was removed between being listed and its lease (the lease row refers
            // to it): nothing to sync, nothing to record.
            if Self.databaseError(error).isForeignKeyViolation,
               (try? SourceStore(database).named(source.name)) == nil {
                return run.removed()
            }
            return run.failed(.database(Self.databaseError(error)))
        }
        defer { lease.release(source.name, token: token) }

        let state: SyncState
        do {
            state = try SyncState.load(db, source: source.name)
            run.report.hadCachedRows = try hasCachedRows(source)
            // Checked under the lease, so a sync that just landed elsewhere counts.
            if options.onlyIfStale {
                if let next = state.nextAttemptAt, next > Timestamp.now() {
                    run.report.outcome = .skipped
                    // The last outcome says which: a hold does not reset the failures before it.
                    let held = state.lastOutcome == "held"
                    run.report.skippedWhile = held ? .held : .failing
                    let seconds = max(0, Int((Timestamp.parse(next)?.timeIntervalSinceNow ?? 0).rounded(.up)))
                    run.report.note = held
                        ? "held by the removal guard; next try in \(DurationText.age(seconds)) (\(next))"
                        : "backing off after \(state.failures) failure\(state.failures == 1 ? "" : "s"); next try in \(DurationText.age(seconds)) (\(next))"
                    return run.finished()
                }
                if try !SourceStore(database).isStale(source) {
                    run.report.outcome = .skipped
                    run.report.note = "fresh"
                    return run.finished()
                }
            }
        } catch {
            return run.failed(.database(Self.databaseError(error)))
        }

        // An incremental source asks only for what changed since its watermark, and merges it;
        // it syncs in full on its first sync, every --full-every and on --full.
        var source = source
        var since: String?
        if let incremental = source.layout?.incremental {
            (since, run.report.note) = Self.incrementalStep(incremental, state: state, full: options.full)
            if since != nil { source.mode = .merge }
        }

        // Fetch, then decode and validate everything before writing anything. The decode runs
        // before the write transaction, so a slow one holds no lock, and under the sync's
        // deadline, so `--timeout` bounds it too.
        let decodeDeadline = DecodeDeadline(deadline, seconds: options.timeout)
        let response: FetchResponse
        // The validated body; nil when upstream confirmed what is cached (304, or the same bytes).
        var payload: Payload?
        let bodyHash: String?
        do throws(UpstreamError) {
            var request = try fetchRequest(for: source, timeout: options.timeout, deadline: deadline)
            if let since, let incremental = source.layout?.incremental {
                try Self.checkSendable(since, of: incremental)
                request.url = try Pager.url(request.url, setting: incremental.sinceParam, to: since)
            }
            if let progress = options.progress {
                request.onBytes = { bytes, total in progress(.downloading(bytes: bytes, total: total)) }
            }
            // Validators only for one-page responses: a 304 to the first page says nothing of the rest.
            // Nor for an incremental source, whose URL changes with its watermark.
            if run.report.hadCachedRows && source.layout?.next == nil && source.layout?.incremental == nil {
                request.etag = Self.validator(state.etag)
                request.lastModified = Self.validator(state.lastModified)
            }
            var answer: FetchResponse
            var bodies: [Data]
            if let layout = source.layout {
                let pages = try fetchPages(request, source: source, layout: layout, options: options, run: &run, deadline: decodeDeadline)
                answer = pages.first
                bodies = pages.bodies
                bodyHash = pages.hash
            } else {
                answer = try fetchAuthorized(request, source: source, options: options, run: &run)
                bodies = answer.notModified ? [] : [answer.body]
                bodyHash = answer.notModified ? nil : BodyHash.of(answer.body)
                answer.body = Data()  // `bodies` holds the one copy, freed as the kind decodes it
            }
            run.report.bytes = bodies.reduce(0) { $0 + $1.count }
            run.report.httpStatus = answer.status
            // 304 confirms what a validator named; without one it confirms nothing we know.
            if answer.notModified && request.etag == nil && request.lastModified == nil {
                throw .badData("HTTP 304 Not Modified, but no validator was sent (a protocol error upstream)")
            }
            response = answer
            // The same bytes as the last ones applied need no decoding and no reconcile.
            // (Not for an incremental source: the same bytes for another question say nothing.)
            let sameBody = bodyHash != nil && bodyHash == state.bodyHash && run.report.hadCachedRows && source.layout?.incremental == nil
            if !bodies.isEmpty && !sameBody {
                payload = try source.kind.definition.payload(&bodies, layout: source.layout, deadline: decodeDeadline)
                if case .records(let set)? = payload { run.report.repeatedRecords = set.repeats }
            }
        } catch {
            if case .httpStatus(let status, _, _) = error { run.report.httpStatus = status }
            if case .rateLimited(let status, _, _, _) = error { run.report.httpStatus = status }
            run.report.failure = .upstream(error)
            // A rate limit's reset is a time the server knows: honoured up to a day, where a
            // Retry-After on an error is honoured up to the backoff's cap.
            var byResetHeader = false
            if case .rateLimited(_, _, _, byResetHeader: true) = error { byResetHeader = true }
            recordFailure(&run, state: state, options: options, retryAfter: error.retryAfter,
                          longest: byResetHeader ? RetryAfter.longest : nil)
            return run.finished()
        }

        let gate = options.writeGate
        gate?.enter()
        defer { gate?.leave() }
        do {
            let now = Timestamp.now()
            // Every row the reconcile writes belongs to this source, whose row is checked once
            // inside the transaction: foreign keys are off for it.
            try db.withoutForeignKeys {
                // The reconcile, in one transaction; `indexing` false once the index's pages turned out
                // damaged (see below).
                var indexing = true
                func reconcile() throws {
                    try db.inTransaction {
                        // The very source row this sync started with, not just one of the same name.
                        let identity = try db.query("SELECT \(SourceStore.identitySQL) FROM sources WHERE name = ?",
                                                    [.text(source.name)]) { $0.text(0) }.first ?? nil
                        guard let identity else { throw SourceRemoved() }
                        guard source.identity == nil || identity == source.identity else {
                            throw CacheError.sourceReplaced(source.name)
                        }
                        // The run is recorded first, so the change log can point at it; its outcome and
                        // counts are filled in below, in the same transaction.
                        let runID = try record(run, finishedAt: now)
                        var confirmAll = true
                        if let payload {
                            let reconciler = Reconciler(db: db, source: source, now: now, runID: runID, progress: options.progress)
                            let cachedRows = try countCachedRows(source)
                            let (counts, changed) = try reconciler.apply(payload)
                            run.report.counts = counts
                            run.report.outcome = changed ? .updated : .unchanged
                            // The removal guard, on what the reconcile did inside this transaction: a
                            // held sync rolls it back whole.
                            if source.mode == .replace && !options.acceptRemovals,
                               let reason = (source.maxDelete ?? .default).refusal(
                                   removing: counts.deleted, of: cachedRows, noun: source.kind.rowNoun) {
                                guard options.plan else { throw Held(reason: reason) }
                                run.report.wouldHold = reason
                            }
                            // The search index follows in the same transaction: it never finds what is
                            // gone. A damaged index is recorded and the rows land all the same. (A plan is
                            // rolled back: nothing to index.)
                            if !options.plan && indexing {
                                let index = SearchIndex(db: db)
                                try index.keepingRows(of: source.name, at: now) { try index.follow(source.name, source.kind, runID: runID) }
                            }
                            // A replace response is the whole truth: every row it left is confirmed.
                            // A merge response confirms only the rows it returned (their seen_at), but
                            // an incremental one says nothing else changed: every row is confirmed.
                            confirmAll = source.mode == .replace || since != nil
                        } else {
                            // 304, or the same body again: upstream confirms every row; nothing is rewritten.
                            run.report.outcome = .unchanged
                        }
                        if options.plan {
                            // Read back what this transaction logged, then roll everything back.
                            run.report.plan = try HistoryStore(database).changes(source: source.name, .run(Int(runID)))
                            run.report.outcome = .planned
                            throw PlanRollback()
                        }
                        // wrote_at is the seen_at of the rows it wrote, confirmed_at sync_state's below:
                        // what `list --as-of` takes the rows' seen_at from.
                        try db.run("""
                            UPDATE sync_runs SET outcome = ?, inserted = ?, updated = ?, deleted = ?, finished_at = ?,
                                                 wrote_at = ?, confirmed_at = CASE WHEN ? THEN ? END
                            WHERE id = ?
                            """, [.text(run.report.outcome.rawValue), .int(run.report.counts.inserted), .int(run.report.counts.updated),
                                  .int(run.report.counts.deleted), .text(Timestamp.now()), .text(now), .int(confirmAll ? 1 : 0), .text(now),
                                  .int(runID)])
                        try db.run("""
                            UPDATE sync_state SET confirmed_at = CASE WHEN ? THEN ? ELSE confirmed_at END,
                                last_success_at = ?, last_attempt_at = ?, last_outcome = ?, last_error = NULL,
                                next_attempt_at = NULL, failures = 0,
                                etag = CASE WHEN ? THEN NULL ELSE coalesce(?, etag) END,
                                last_modified = CASE WHEN ? THEN NULL ELSE coalesce(?, last_modified) END,
                                body_hash = coalesce(?, body_hash)
                            WHERE source = ?
                            """, [.int(confirmAll ? 1 : 0), .text(now), .text(now), .text(now), .text(run.report.outcome.rawValue),
                                  .int(response.etag != nil && Self.validator(response.etag) == nil ? 1 : 0), .optionalText(Self.validator(response.etag)),
                                  .int(response.lastModified != nil && Self.validator(response.lastModified) == nil ? 1 : 0),
                                  .optionalText(Self.validator(response.lastModified)), .optionalText(bodyHash),
                                  .text(source.name)])
                        // A row whose edits all applied shows them until a sync begun after they
                        // applied brings the upstream's own version: this one, now.
                        if source.kind.keepsRecords {
                            try db.run("DELETE FROM record_overlay WHERE source = ? AND pending = 0 AND settled_at < ?",
                                       [.text(source.name), .text(run.startedAt)])
                            try db.run("""
                                UPDATE record_overlay SET upstream = NULL, upstream_gone = 0, settled_at = NULL
                                WHERE source = ? AND pending = 1 AND settled_at < ?
                                """, [.text(source.name), .text(run.startedAt)])
                        }
                        if let incremental = source.layout?.incremental {
                            try source.kind.storage.definition.recordWatermark(db, incremental, source: source.name, fullSync: since == nil, at: now)
                        }
                    }
                }
                do {
                    try reconcile()
                } catch let damaged as SearchIndex.PagesDamaged {
                    // A damaged page of the index makes SQLite refuse every later write of the
                    // transaction: it was rolled back whole, and runs once more without the index,
                    // whose damage is then recorded on its own.
                    indexing = false
                    try reconcile()
                    try db.inTransaction { try SearchIndex(db: db).recordDamage(of: source.name, damaged.message, at: now) }
                }
            }
            options.progress?(.finished)
        } catch is PlanRollback {
            options.progress?(.finished)
        } catch let held as Held {
            options.progress?(.finished)
            run.report.counts = ChangeCounts()
            run.report.failure = .held(source: source.name, reason: held.reason)
            recordHeld(&run, askAgainIn: source.ttlSeconds, fullSweep: source.layout?.incremental != nil && since == nil)
        } catch is SourceRemoved {
            options.progress?(.finished)
            return run.removed()
        } catch let replaced as CacheError {
            // Nothing is recorded: the source this run belonged to is gone.
            options.progress?(.finished)
            run.report.outcome = .failed
            run.report.counts = ChangeCounts()
            run.report.failure = .source(replaced)
        } catch {
            options.progress?(.finished)
            run.report.outcome = .failed
            run.report.counts = ChangeCounts()
            run.report.failure = .database(Self.databaseError(error))
            recordFailure(&run, state: state, options: options, retryAfter: nil)
        }
        return run.finished()
    }

    private func hasCachedRows(_ source: Source) throws -> Bool {
        try source.kind.storage.cachedTables.contains { table in
            try db.scalarInt("SELECT EXISTS (SELECT 1 FROM \(table) WHERE source = ?)", [.text(source.name)]) == 1
        }
    }

    /// The rows the removal guard weighs a sync's removals against.
    private func countCachedRows(_ source: Source) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM \(source.kind.storage.rowTable) WHERE source = ?", [.text(source.name)]) ?? 0)
    }

    /// A validator goes back to the server in a header as it came, so only one that is a valid
    /// header value is kept or sent: one holding a CR, an LF or another control is dropped, and
    /// the next request is unconditional.
    static func validator(_ value: String?) -> String? {
        guard let value, !value.isEmpty, !value.unicodeScalars.contains(where: Source.Header.isControl) else { return nil }
        return value
    }

    static func databaseError(_ error: Error) -> DatabaseError {
        error as? DatabaseError ?? DatabaseError(extendedCode: 1, message: "\(error)")
    }
}

/// One writer at a time among the syncs of one process.
package final class WriteGate: @unchecked Sendable {
    private let lock = DispatchSemaphore(value: 1)
    package init() {}
    func enter() { lock.wait() }
    func leave() { lock.signal() }
}

/// The source was removed while its sync ran: thrown to roll the write transaction back.
private struct SourceRemoved: Error {}

/// The removal guard's refusal, thrown to roll the write transaction back.
private struct Held: Error {
    let reason: String
}

/// Ends a `--plan` transaction once its changes have been read: nothing is kept.
private struct PlanRollback: Error {}
