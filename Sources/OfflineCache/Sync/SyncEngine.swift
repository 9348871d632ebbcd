import Foundation

/// Fetches sources and reconciles them into the cache.
///
/// One sync is one straight path: fetch → decode and validate the whole body → one
/// `BEGIN IMMEDIATE` transaction that reconciles the rows and records the run. A failure at
/// any step writes only the failed run and the source's last error; the cached rows stay.
public struct SyncEngine {
    public struct Options: Sendable {
        /// Skip sources whose last success is still within their TTL.
        public var onlyIfStale = false
        public var timeout = FetchRequest.defaultTimeout
        public init(onlyIfStale: Bool = false, timeout: Double = FetchRequest.defaultTimeout) {
            self.onlyIfStale = onlyIfStale
            self.timeout = timeout
        }
    }

    let database: CacheDatabase
    let fetcher: any Fetching
    let environment: [String: String]

    public init(database: CacheDatabase, fetcher: any Fetching = Fetcher(),
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.database = database
        self.fetcher = fetcher
        self.environment = environment
    }

    private var db: Connection { database.connection }

    /// Syncs one source and reports what happened; it throws only for an unknown source.
    public func sync(_ name: String, options: Options = Options()) throws(CacheError) -> SyncReport {
        let source = try SourceStore(database).named(name)
        return sync(source, options: options)
    }

    public func sync(_ source: Source, options: Options = Options()) -> SyncReport {
        let clock = ContinuousClock.now
        let startedAt = Timestamp.now()
        var report = SyncReport(source: source.name, outcome: .failed)
        func finish(_ report: inout SyncReport) {
            report.durationMs = Int((ContinuousClock.now - clock) / .milliseconds(1))
        }

        // One sync per source at a time: another process's sync in flight means this one has
        // nothing to add. The lease outlives a fetch's whole timeout, with room to write.
        let lease = SyncLease(database)
        let token: String
        do {
            switch try lease.acquire(source.name, for: options.timeout + 60) {
            case .held(let pid):
                report.outcome = .skipped
                report.note = "already syncing, pid \(pid)"
                finish(&report)
                try? db.inTransaction { try recordRun(report, startedAt: startedAt, finishedAt: Timestamp.now()) }
                return report
            case .acquired(let acquired):
                token = acquired
            }
        } catch {
            report.failure = .database(error as? DatabaseError ?? DatabaseError(extendedCode: 1, message: "\(error)"))
            finish(&report)
            return report
        }
        defer { lease.release(source.name, token: token) }

        do {
            report.hadCachedRows = try hasCachedRows(source)
            // Checked under the lease, so a sync that just landed elsewhere counts.
            if options.onlyIfStale, try !CacheReader(database).isStale(source) {
                report.outcome = .skipped
                report.note = "fresh"
                finish(&report)
                return report
            }
        } catch {
            report.failure = .database(error as? DatabaseError ?? DatabaseError(extendedCode: 1, message: "\(error)"))
            finish(&report)
            return report
        }

        // Fetch and validate everything before writing anything.
        let payload: Payload
        do {
            let request = try fetchRequest(for: source, timeout: options.timeout)
            let response = try fetcher.fetch(request)
            report.httpStatus = response.status
            report.bytes = response.body.count
            payload = try PayloadDecoder.decode(response.body, kind: source.kind)
        } catch {
            if case .httpStatus(let status, _) = error { report.httpStatus = status }
            report.failure = .upstream(error)
            finish(&report)
            recordFailure(report, source: source, startedAt: startedAt)
            return report
        }

        do {
            let now = Timestamp.now()
            try db.inTransaction {
                let (counts, changed) = try Reconciler(db: db, source: source, now: now).apply(payload)
                report.counts = counts
                report.outcome = changed ? .updated : .unchanged
                finish(&report)
                try recordRun(report, startedAt: startedAt, finishedAt: now)
                // A replace response is the whole truth: every row it left in the cache is confirmed.
                try db.run("""
                    UPDATE sync_state SET confirmed_at = CASE WHEN ? THEN ? ELSE confirmed_at END,
                        last_success_at = ?, last_attempt_at = ?, last_outcome = ?, last_error = NULL,
                        next_attempt_at = NULL
                    WHERE source = ?
                    """, [.int(source.mode == .replace ? 1 : 0), .text(now), .text(now), .text(now),
                          .text(report.outcome.rawValue), .text(source.name)])
            }
        } catch {
            report.outcome = .failed
            report.counts = ChangeCounts()
            report.failure = .database(error as? DatabaseError ?? DatabaseError(extendedCode: 1, message: "\(error)"))
            finish(&report)
            recordFailure(report, source: source, startedAt: startedAt)
        }
        return report
    }

    /// The request for `source`, with its extra headers and, if it names one, its bearer token.
    func fetchRequest(for source: Source, timeout: Double) throws(UpstreamError) -> FetchRequest {
        var headers = source.headers
        if let variable = source.tokenEnv {
            guard let token = environment[variable], !token.isEmpty else { throw .missingToken(variable: variable) }
            headers.append(Source.Header(name: "Authorization", value: "Bearer \(token)"))
        }
        return FetchRequest(url: source.url, headers: headers, timeout: timeout,
                            maxBytes: source.maxBytes ?? FetchRequest.defaultMaxBytes)
    }

    private func hasCachedRows(_ source: Source) throws -> Bool {
        let table = source.kind == .account ? "accounts" : "jokes"
        return try db.scalarInt("SELECT EXISTS (SELECT 1 FROM \(table) WHERE source = ?)", [.text(source.name)]) == 1
    }

    private func recordRun(_ report: SyncReport, startedAt: String, finishedAt: String) throws {
        try db.run("""
            INSERT INTO sync_runs (source, started_at, finished_at, outcome, inserted, updated, deleted, http_status, bytes, error, note)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(report.source), .text(startedAt), .text(finishedAt), .text(report.outcome.rawValue),
                  .int(report.counts.inserted), .int(report.counts.updated), .int(report.counts.deleted),
                  .optionalInt(report.httpStatus), .optionalInt(report.bytes),
                  .optionalText(report.failure?.description), .optionalText(report.note)])
    }

    /// Records a failed run and the source's last error. Best effort: the failure being
    /// reported matters more than a failure to record it.
    private func recordFailure(_ report: SyncReport, source: Source, startedAt: String) {
        let now = Timestamp.now()
        try? db.inTransaction {
            try recordRun(report, startedAt: startedAt, finishedAt: now)
            try db.run("""
                UPDATE sync_state SET last_attempt_at = ?, last_outcome = 'failed', last_error = ? WHERE source = ?
                """, [.text(now), .optionalText(report.failure?.description), .text(source.name)])
        }
    }
}
