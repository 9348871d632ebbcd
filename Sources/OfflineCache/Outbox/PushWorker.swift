import FoundationEssentials

/// One worker of a push (`Pusher`): claims an edit, prepares its request and sends it; what
/// the answer makes of the edit is in `PushWorker+Answers.swift`.
struct PushWorker {
    let pusher: Pusher
    let run: Pusher.Run
    let db: Connection
    /// This worker's connections to the upstream, kept from one request to the next.
    let connection = ReusedConnection()
    /// What the answers of the batch in hand make of their edits, written in one transaction
    /// once the batch's answers are all in (`settleBatch`).
    private let settlements = Settlements()
    var store: OutboxStore { OutboxStore(db: db) }

    /// Edits claimed at once, at most, each of another row: one transaction claims them, one
    /// settles them, where each edit took two of its own (a commit each, and the pages its
    /// indexes share written again each time). A short queue is shared out instead (`Run.batch`):
    /// eight edits go side by side on eight connections to the upstream, not one after another
    /// on one.
    static let batch = 32

    private final class Settlements {
        var pending: [() throws -> Void] = []
    }

    /// A claimed edit: the edit, its stored request (nil: not prepared yet), its precondition.
    struct Claimed {
        var edit: LocalEdit
        var request: Pusher.StoredRequest?
        var baseETag: String?
        var sentBefore: Bool
        /// Its request was stored (and logged sent) when it was claimed.
        var recorded = false
    }

    func writing<T>(_ body: () throws -> T) throws -> T {
        run.writes.lock()
        defer { run.writes.unlock() }
        return try db.inTransaction(body)
    }

    /// An answer's writes, made with the rest of the batch's (`settleBatch`). Until then the edit
    /// stays in flight under this push's claim: a row's next edit waits, and a kill leaves the
    /// edit to be sent again with its stored request, as one killed before the answer.
    func settling(_ body: @escaping () throws -> Void) {
        settlements.pending.append(body)
    }

    /// Writes the answers of the batch in hand, in one transaction.
    func settleBatch() throws {
        guard !settlements.pending.isEmpty else { return }
        let pending = settlements.pending
        settlements.pending = []
        try writing { for settle in pending { try settle() } }
    }

    /// Claims a batch (at most `batch` edits, each of another row), makes the reads their
    /// preconditions need, stores every request before any is sent (one transaction), sends each
    /// in turn on this worker's connection, then settles them together (one transaction); false
    /// when there was none to claim.
    mutating func pushBatch() throws -> Bool {
        let claimed = try claim()
        guard !claimed.isEmpty else { return false }
        var ready: [Claimed] = []
        var toStore: [(edit: LocalEdit, request: Pusher.StoredRequest, prepared: Bool)] = []
        for var edit in claimed {
            guard let source = run.sources[edit.edit.source], !requeuedIfStopped(edit, source: source) else { continue }
            if edit.request == nil {
                do {
                    guard let prepared = try prepare(edit, source: source) else { continue }  // the read settled it
                    edit.request = prepared
                    toStore.append((edit.edit, prepared, true))
                } catch let error as UpstreamError {
                    try failed(edit, error: error, source: source)
                    continue
                }
            } else if !edit.recorded {
                toStore.append((edit.edit, edit.request!, false))  // stored by an earlier push whose answer was lost
            }
            edit.recorded = true
            ready.append(edit)
        }
        if !toStore.isEmpty {
            try writing {
                for (edit, request, prepared) in toStore {
                    if prepared { try record(request, of: edit) }
                    else { try store.log(edit.id, "sent", "\(request.method) \(request.url) (again)", at: Date()) }
                }
            }
        }
        for edit in ready {
            guard let source = run.sources[edit.edit.source], !requeuedIfStopped(edit, source: source) else { continue }
            try send(edit, source: source)
            // A new record's answer is written at once: an upstream that ignores the
            // Idempotency-Key would make the record twice, were a kill to send it again.
            if edit.edit.operation == .create { try settleBatch() }
        }
        try settleBatch()
        return true
    }

    /// A source stopped by an earlier answer (its credentials refused) sends nothing more in this
    /// push: its edit goes back to the queue, its request kept, and logged `unsent`, so the log
    /// (and a later push's judgement of a 409) does not take it for sent.
    private func requeuedIfStopped(_ claimed: Claimed, source: Source) -> Bool {
        guard run.report.withLock({ $0.stopped[source.name] != nil }) else { return false }
        settling { [self] in
            try db.run("UPDATE outbox SET state = 'queued', claim = NULL WHERE id = ?", [.text(claimed.edit.id)])
            try store.log(claimed.edit.id, "unsent", "not sent: \(source.name)'s push stopped; it goes with the same request next time", at: Date())
        }
        return true
    }

    /// The oldest edits that may go now (at most `batch`): queued, each the first open edit of
    /// its row (so no two of one row), of a source still pushing, not failed already in this
    /// push, its backoff passed (or ignored). Edits whose push died are queued again first.
    mutating func claim() throws -> [Claimed] {
        try writing {
            // Read under the write lock: a worker marks an edit tried (or its source stopped)
            // before it takes the lock to queue the edit again, so none is taken back at once.
            let stopped = JSONValue.array(run.report.withLock { $0.stopped.keys.map { .string($0) } }).compact
            let tried = JSONValue.array(run.tried.withLock { $0.map { .string($0) } }).compact
            try requeueAbandoned()
            let now = Timestamp.now()
            let rows = try db.query("""
                SELECT \(OutboxStore.columns), request, base_etag,
                       EXISTS (SELECT 1 FROM outbox_log l WHERE l.edit = o.id AND l.event IN ('sent', 'retried')
                                 AND NOT EXISTS (SELECT 1 FROM outbox_log u WHERE u.edit = o.id AND u.event = 'unsent' AND u.id > l.id))
                FROM outbox o
                WHERE state = 'queued' AND source IN (SELECT value FROM json_each(?1)) AND source NOT IN (SELECT value FROM json_each(?2))
                  AND id NOT IN (SELECT value FROM json_each(?3)) AND (NOT ?4 OR next_at IS NULL OR next_at <= ?5)
                  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.source = o.source AND p.key = o.key AND p.seq < o.seq
                                                          AND p.state IN \(OutboxStore.open))
                ORDER BY seq LIMIT ?6
                """, [.text(run.names), .text(stopped), .text(tried), .int(run.dueOnly ? 1 : 0), .text(now), .int(run.batch)], row: { row in
                    Claimed(edit: OutboxStore.edit(row), request: row.text(13).flatMap { Pusher.StoredRequest(json: $0) },
                            baseETag: row.text(14), sentBefore: row.int(15) != 0)
                })
            return try rows.map { row in
                var claimed = row
                try db.run("UPDATE outbox SET state = 'in_flight', claim = ? WHERE id = ?", [.text(run.claim), .text(row.edit.id)])
                // A request that needs no read first is made and stored in this same transaction.
                if claimed.request == nil, let source = run.sources[row.edit.source], let planned = try plan(row, source: source) {
                    try record(planned, of: row.edit)
                    claimed.request = planned
                    claimed.recorded = true
                }
                return claimed
            }
        }
    }

    /// Stores the request with its edit and logs it sent, before it is.
    func record(_ request: Pusher.StoredRequest, of edit: LocalEdit) throws {
        try db.run("UPDATE outbox SET request = ? WHERE id = ?", [.text(request.json), .text(edit.id)])
        try store.log(edit.id, "sent", "\(request.method) \(request.url)", at: Date())
    }

    /// In-flight edits whose push is gone (its process died, or ended in this one without the
    /// answer) go back to the queue: a kill is not an attempt.
    func requeueAbandoned() throws {
        let claims = try db.query("SELECT DISTINCT claim FROM outbox WHERE state = 'in_flight'") { $0.text(0) ?? "" }
        for claim in claims {
            let parts = claim.split(separator: ":", maxSplits: 1)
            let pid = Int32(parts.first ?? "") ?? 0
            let alive = pid == Processes.current ? Pusher.live.contains(parts.count == 2 ? String(parts[1]) : "") : SyncLease.isAlive(pid)
            guard !alive else { continue }
            for id in try db.query("SELECT id FROM outbox WHERE state = 'in_flight' AND claim = ?", [.text(claim)], row: { $0.text(0) ?? "" }) {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL WHERE id = ?", [.text(id)])
                try store.log(id, "requeued", "the push that sent it (pid \(pid)) ended before the answer: it goes again, the same request", at: Date())
            }
        }
    }

    // MARK: Sending

    /// Sends an edit's stored request and settles what its answer makes of it.
    func send(_ claimed: Claimed, source: Source) throws {
        do {
            let response = try fetch(claimed.request!, source: source)
            try settle(claimed, response: response, source: source)
        } catch let error as UpstreamError {
            try failed(claimed, error: error, source: source)
        }
    }

    /// The request for an edit whose precondition needs a read (`plan` made the others): the
    /// record is read first and compared with the version the edit was made on, and `If-Match`
    /// carries the ETag that read returned. Nil when the read settled the edit (a conflict; a
    /// removal of a record already gone).
    func prepare(_ claimed: Claimed, source: Source) throws -> Pusher.StoredRequest? {
        let edit = claimed.edit
        let url = source.writing.url(of: edit.key) ?? ""
        // No ETag known for the version the edit was made on: read the record, compare.
        let read = try fetch(Pusher.StoredRequest(method: "GET", url: url, idempotencyKey: "", ifMatch: nil, body: nil), source: source)
        if read.status == 404 || read.status == 410 {
            if edit.operation == .delete {
                try applied(claimed, response: read, source: source, note: "the record was already gone")
            } else {
                try conflict(claimed, remote: nil, remoteETag: nil, status: read.status, why: "the record is gone upstream")
            }
            return nil
        }
        guard (200..<300).contains(read.status) else { throw UpstreamError.httpStatus(read.status, url: url, retryAfter: read.retryAfter) }
        let remote = String(decoding: read.body, as: UTF8.self)
        let remoteCanonical = try? OutboxStore.canonical(remote, source: source).record
        let baseCanonical = try edit.base.map { try OutboxStore.canonical($0, source: source).record }
        if remoteCanonical != baseCanonical {
            try conflict(claimed, remote: remoteCanonical ?? remote, remoteETag: read.etag, status: read.status,
                         why: "the record changed upstream since the edit was made")
            return nil
        }
        var request = try request(claimed, source: source)
        request.ifMatch = read.etag
        return request
    }

    /// The request for an edit that needs no read first — a new record, a source that lets the
    /// last write win, a version whose ETag is known — or nil when it needs one (`prepare`).
    func plan(_ claimed: Claimed, source: Source) throws -> Pusher.StoredRequest? {
        guard claimed.edit.operation == .create || source.writing.conflictCheck == .none || claimed.baseETag != nil else { return nil }
        var request = try request(claimed, source: source)
        if claimed.edit.operation != .create, source.writing.conflictCheck == .ifMatch { request.ifMatch = claimed.baseETag }
        return request
    }

    /// The edit's method, URL and body from the source's write options, with a new
    /// `Idempotency-Key` (the edit's id the first time; after a retry or a resolve, a new one).
    func request(_ claimed: Claimed, source: Source) throws -> Pusher.StoredRequest {
        let edit = claimed.edit
        let writing = source.writing
        let key = claimed.sentBefore ? UUID().uuidString.lowercased() : edit.id
        let body = try edit.body.map { try OutboxStore.object($0) }
        let base = try edit.base.map { try OutboxStore.object($0) }
        guard edit.operation != .create else {
            return Pusher.StoredRequest(method: "POST", url: writing.createURL ?? "", idempotencyKey: key, ifMatch: nil, body: body?.compact)
        }
        var sent: JSONValue?
        var method = "DELETE"
        switch (edit.operation, writing.method) {
        case (.patch, .patch): (method, sent) = ("PATCH", body)
        case (.patch, .put): (method, sent) = ("PUT", MergePatch.apply(body ?? .object([]), to: base))
        case (.replace, .put): (method, sent) = ("PUT", body)
        case (.replace, .patch): (method, sent) = ("PATCH", base.map { MergePatch.diff(from: $0, to: body ?? .object([])) } ?? body)
        default: break
        }
        return Pusher.StoredRequest(method: method, url: writing.url(of: edit.key) ?? "", idempotencyKey: key, ifMatch: nil, body: sent?.compact)
    }

    /// One request with the source's headers, token (or OAuth2 token) and CA, and the write's own
    /// headers; a GET when the stored request is a read.
    func fetch(_ stored: Pusher.StoredRequest, source: Source) throws(UpstreamError) -> FetchResponse {
        var request = try SyncEngine.fetchRequest(for: source, environment: pusher.environment, timeout: pusher.timeout)
        guard let url = URL(string: stored.url) else { throw .badURL(stored.url) }
        request.url = url
        request.maxBytes = min(request.maxBytes, 1 << 20)
        if stored.method != "GET" {
            request.headers.append(Source.Header(name: "Idempotency-Key", value: "\"\(stored.idempotencyKey)\""))
        }
        if let ifMatch = stored.ifMatch { request.headers.append(Source.Header(name: "If-Match", value: ifMatch)) }
        request.write = (stored.method, stored.body.map { Data($0.utf8) })
        request.connection = connection
        if let client = source.oauth {
            let token = try OAuthTokens.token(for: client, environment: pusher.environment, fetcher: pusher.fetcher, deadline: request.deadline,
                                              timeout: pusher.timeout, caCert: source.caCert)
            request.headers.append(Source.Header(name: "Authorization", value: "Bearer " + token))
        }
        return try pusher.fetcher.fetch(request)
    }
}
