import Dispatch
import FoundationEssentials
import Glibc

/// Sends queued edits to the upstream (`cache push`, and every `cache sync` before it fetches).
///
/// A row's edits go in order, one in flight at a time; different rows go side by side, up to
/// `workers` at once, each worker on its own connection. An edit is claimed in one `BEGIN
/// IMMEDIATE` transaction, so two pushes never send the same edit at once; the claim names this
/// process (pid and a token), and an edit whose claimer died is queued again by the next push.
/// The request — method, URL, `Idempotency-Key`, `If-Match`, body — is stored with the edit before
/// it is sent: an answer that was lost (a dropped connection, a timeout, a kill) is followed by
/// the very same request. The answer decides the state (see `settle`); none blocks another row.
package struct Pusher: Sendable {
    let open: @Sendable () throws -> CacheDatabase
    let fetcher: any Fetching
    let environment: [String: String]
    /// Rows sent side by side.
    package var workers = 8
    /// The time one request may take.
    package var timeout = FetchRequest.defaultTimeout
    /// Between failed sends of one edit, unless the upstream says when (`Retry-After`).
    package var backoff = Backoff(base: 2, cap: 600)
    /// An answer body kept with an edit, at most (a 4xx's explanation).
    static let keptAnswer = 4096

    package init(open: @escaping @Sendable () throws -> CacheDatabase, fetcher: any Fetching = Fetcher(),
                 environment: [String: String] = processEnvironment()) {
        self.open = open
        self.fetcher = fetcher
        self.environment = environment
    }

    /// Pushes the open edits of `sources`. `dueOnly` leaves edits whose backoff has not passed
    /// (`sync --if-stale`); otherwise every queued edit is sent now, once in this push.
    package func push(_ sources: [Source], dueOnly: Bool = false) throws -> LocalEdit.PushReport {
        let run = Run(sources: Dictionary(sources.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }), dueOnly: dueOnly)
        Self.live.insert(run.token)
        defer { Self.live.remove(run.token) }
        let first = try open()
        guard try first.connection.scalarInt("SELECT count(*) FROM outbox WHERE state IN ('queued', 'in_flight') AND source IN (SELECT value FROM json_each(?))",
                                             [.text(run.names)]) ?? 0 > 0 else { return run.report.value }
        let failure = Locked<Error?>(nil)
        // Each worker a thread of its own (they wait on the network, not the CPU) and a
        // connection of its own (one connection is one transaction at a time).
        let pusher = self
        let threads = (0..<workers).map { _ in
            JoinedThread {
                do {
                    let database = try pusher.open()
                    var worker = Worker(pusher: pusher, run: run, db: database.connection)
                    while let edit = try worker.claim() { try worker.send(edit) }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        for thread in threads { thread.join() }
        if let error = failure.withLock({ $0 }) { throw error }
        var report = run.report.value
        // Still to go: queued edits that lead their row (one behind a conflict or a rejection
        // waits for a person, which the exit status of this push does not say again).
        report.queued = try first.connection.scalarInt("""
            SELECT count(*) FROM outbox o WHERE state = 'queued' AND source IN (SELECT value FROM json_each(?))
              AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.source = o.source AND p.key = o.key AND p.seq < o.seq
                                                      AND p.state IN \(OutboxStore.open))
            """, [.text(run.names)]).map(Int.init) ?? 0
        return report
    }

    /// The tokens of the pushes running in this process: a claim of this pid with another token
    /// was left by a push that ended without its answer.
    static let live = LiveTokens()

    /// What the workers of one push share.
    final class Run: @unchecked Sendable {
        let sources: [String: Source]
        let names: String
        let dueOnly: Bool
        let token = UUID().uuidString.lowercased()
        let started = Date()
        /// Edits that failed in this push, not sent again by it.
        let tried = Locked<Set<String>>([])
        let report = Locked(LocalEdit.PushReport())
        /// One write at a time among this process's workers (SQLite would serialise them by
        /// polling its busy timeout).
        let writes = Condition()

        init(sources: [String: Source], dueOnly: Bool) {
            self.sources = sources
            self.dueOnly = dueOnly
            names = JSONValue.array(sources.keys.sorted().map { .string($0) }).compact
        }

        var claim: String { "\(getpid()):\(token)" }
    }

    /// The request as stored with its edit, before it is sent.
    struct StoredRequest: Equatable {
        var method: String
        var url: String
        var idempotencyKey: String
        var ifMatch: String?
        var body: String?

        var json: String {
            JSONValue.object([("method", .string(method)), ("url", .string(url)), ("idempotency_key", .string(idempotencyKey)),
                              ("if_match", .optional(ifMatch)), ("body", .optional(body))]).compact
        }

        init(method: String, url: String, idempotencyKey: String, ifMatch: String?, body: String?) {
            self.method = method
            self.url = url
            self.idempotencyKey = idempotencyKey
            self.ifMatch = ifMatch
            self.body = body
        }

        init?(json: String) {
            guard case .object(let members)? = try? JSONValue.parse(Data(json.utf8)) else { return nil }
            func text(_ name: String) -> String? {
                if case .string(let value)? = members.first(where: { $0.0 == name })?.1 { return value }
                return nil
            }
            guard let method = text("method"), let url = text("url"), let key = text("idempotency_key") else { return nil }
            self.init(method: method, url: url, idempotencyKey: key, ifMatch: text("if_match"), body: text("body"))
        }
    }
}

/// One worker of a push: claims an edit, prepares its request, sends it, records the answer.
private struct Worker {
    let pusher: Pusher
    let run: Pusher.Run
    let db: Connection
    /// This worker's connections to the upstream, kept from one request to the next.
    let connection = ReusedConnection()
    var store: OutboxStore { OutboxStore(db: db) }

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

    /// The oldest edit that may go now: queued, the first open edit of its row, of a source still
    /// pushing, not failed already in this push, its backoff passed (or ignored). Edits whose
    /// push died are queued again first.
    mutating func claim() throws -> Claimed? {
        try writing {
            // Read under the write lock: a worker marks an edit tried (or its source stopped)
            // before it takes the lock to queue the edit again, so none is taken back at once.
            let stopped = JSONValue.array(run.report.withLock { $0.stopped.keys.map { .string($0) } }).compact
            let tried = JSONValue.array(run.tried.withLock { $0.map { .string($0) } }).compact
            try requeueAbandoned()
            let now = Timestamp.now()
            guard let row = try db.query("""
                SELECT \(OutboxStore.columns), request, base_etag,
                       EXISTS (SELECT 1 FROM outbox_log l WHERE l.edit = o.id AND l.event IN ('sent', 'retried'))
                FROM outbox o
                WHERE state = 'queued' AND source IN (SELECT value FROM json_each(?1)) AND source NOT IN (SELECT value FROM json_each(?2))
                  AND id NOT IN (SELECT value FROM json_each(?3)) AND (NOT ?4 OR next_at IS NULL OR next_at <= ?5)
                  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.source = o.source AND p.key = o.key AND p.seq < o.seq
                                                          AND p.state IN \(OutboxStore.open))
                ORDER BY seq LIMIT 1
                """, [.text(run.names), .text(stopped), .text(tried), .int(run.dueOnly ? 1 : 0), .text(now)], row: { row in
                    Claimed(edit: OutboxStore.edit(row), request: row.text(13).flatMap { Pusher.StoredRequest(json: $0) },
                            baseETag: row.text(14), sentBefore: row.int(15) != 0)
                }).first else { return nil }
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
            let alive = pid == getpid() ? Pusher.live.contains(parts.count == 2 ? String(parts[1]) : "") : SyncLease.isAlive(pid)
            guard !alive else { continue }
            for id in try db.query("SELECT id FROM outbox WHERE state = 'in_flight' AND claim = ?", [.text(claim)], row: { $0.text(0) ?? "" }) {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL WHERE id = ?", [.text(id)])
                try store.log(id, "requeued", "the push that sent it (pid \(pid)) ended before the answer: it goes again, the same request", at: Date())
            }
        }
    }

    // MARK: Sending

    func send(_ claimed: Claimed) throws {
        var claimed = claimed
        guard let source = run.sources[claimed.edit.source] else { return }
        do {
            if claimed.request == nil {
                guard let prepared = try prepare(claimed, source: source) else { return }
                claimed.request = prepared
                claimed.recorded = true
                try writing { try record(prepared, of: claimed.edit) }
            }
            let request = claimed.request!
            // A request stored by an earlier push (its answer lost) is sent again, and logged so.
            if !claimed.recorded { try writing { try store.log(claimed.edit.id, "sent", "\(request.method) \(request.url) (again)", at: Date()) } }
            let response = try fetch(request, source: source)
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

    // MARK: Answers

    /// What the answer makes of the edit (see the table in the README's "Local edits").
    func settle(_ claimed: Claimed, response: FetchResponse, source: Source) throws {
        let status = response.status
        switch status {
        case 200..<300:
            try applied(claimed, response: response, source: source, note: nil)
        case 412:
            let url = source.writing.url(of: claimed.edit.key) ?? ""
            let read = try? fetch(Pusher.StoredRequest(method: "GET", url: url, idempotencyKey: "", ifMatch: nil, body: nil), source: source)
            let found = read.flatMap { (200..<300).contains($0.status) ? String(decoding: $0.body, as: UTF8.self) : nil }
            try conflict(claimed, remote: found.map { (try? OutboxStore.canonical($0, source: source).record) ?? $0 },
                         remoteETag: read?.etag, status: status, why: "the record changed upstream since the edit was made (412)")
        case 409 where claimed.sentBefore || claimed.request != nil && claimed.edit.attempts > 0:
            try again(claimed, status: status, answer: response, why: "the first send of this request is still in flight upstream (409)", source: source)
        case 401, 403:
            // The source stops before its edit is queued again: no other worker sends it.
            run.report.withLock {
                $0.sent.append(claimed.edit.id)
                $0.stopped[source.name] = "HTTP \(status) from \(Source.redacted(URL(string: claimed.request?.url ?? "") ?? source.url)): the upstream refused the credentials; \(source.name)'s edits stay queued"
            }
            try writing {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer_status = ?, answer = ? WHERE id = ?",
                           [.int(status), .text(Self.kept(response.body)), .text(claimed.edit.id)])
                try store.log(claimed.edit.id, "refused", "HTTP \(status): the upstream refused the credentials; the edit stays queued", at: Date())
            }
        case 408, 425, 429, 500..<600:
            try again(claimed, status: status, answer: response, why: "HTTP \(status)", source: source)
        default:
            try rejected(claimed, status: status, answer: Self.kept(response.body),
                         why: Self.redirects.contains(status) ? "HTTP \(status): the upstream moved the record (set '--write-url' to where it is now)" : "HTTP \(status)")
        }
    }

    static let redirects: Set<Int> = [301, 302, 303, 307, 308]

    static func kept(_ body: Data) -> String {
        String(decoding: body.prefix(Pusher.keptAnswer), as: UTF8.self)
    }

    /// The network failed (or the request could not be made): a retryable failure goes again
    /// later with the same request; a missing token stops the source's push.
    func failed(_ claimed: Claimed, error: UpstreamError, source: Source) throws {
        if case .httpStatus(let status, _, _) = error, status != 408, status != 429, !(500...599).contains(status), claimed.request == nil {
            // The read a precondition needs was refused (405: the record cannot be read; 400…):
            // nothing was sent, and nothing is, until the source says how to check (its
            // --conflict-check) or the upstream reads.
            run.report.withLock { $0.stopped[source.name] = "the upstream refused to read \(source.name)'s record \(claimed.edit.key) before a change (\(error)); its edits stay queued ('--conflict-check none' sends them without that read)" }
            try writing {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer = ? WHERE id = ?", [.text("\(error)"), .text(claimed.edit.id)])
            }
            return
        }
        if error.isRetryable || { if case .unreachable = error { return true }; return false }() {
            // The upstream's own word on when to ask again (Retry-After, a rate limit's reset) is kept.
            var answer: FetchResponse?
            if let wait = error.retryAfter {
                answer = FetchResponse(status: 0, body: Data("\(error)".utf8))
                answer?.retryAfter = wait
            }
            let status: Int? = if case .httpStatus(let code, _, _) = error { code } else { nil }
            try again(claimed, status: status, answer: answer, why: "\(error)", source: source)
            return
        }
        // A status thrown (a fetcher that throws for any status, as an app's may): judged as answered.
        if case .httpStatus(let status, _, let retryAfter) = error {
            var response = FetchResponse(status: status, body: Data())
            response.retryAfter = retryAfter
            return try settle(claimed, response: response, source: source)
        }
        run.report.withLock { $0.stopped[source.name] = "\(error)" }
        try writing {
            try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer = ? WHERE id = ?", [.text("\(error)"), .text(claimed.edit.id)])
        }
    }

    /// A 2xx: the edit applied. The answer's body, when it is the record, is what the row shows
    /// until the next sync (else the overlay as it was); its ETag is the precondition of the
    /// row's next edit; a record made here takes the key the upstream gave it.
    func applied(_ claimed: Claimed, response: FetchResponse, source: Source, note: String?) throws {
        let edit = claimed.edit
        let answered = String(decoding: response.body, as: UTF8.self)
        let record = edit.operation == .delete ? nil : try? OutboxStore.canonical(answered, source: source)
        var key = edit.key
        if edit.operation == .create {
            key = record?.key ?? response.location.flatMap { $0.split(separator: "/").last.map(String.init) } ?? edit.key
        }
        try writing {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'applied', attempts = attempts + 1, answer_status = ?, answer = ?, claim = NULL, finished_at = ?, key = ?
                WHERE id = ?
                """, [.int(response.status), .text(Self.kept(response.body)), .text(Timestamp.format(now)), .text(key), .text(edit.id)])
            try store.log(edit.id, "applied", note ?? "HTTP \(response.status)" + (key != edit.key ? ": the upstream's key is \(key)" : ""), at: now)
            let shown = try db.scalarText("SELECT record FROM record_overlay WHERE source = ? AND key = ?", [.text(edit.source), .text(edit.key)])
            if key != edit.key {
                // The local key gives way to the upstream's, for the row and its later edits.
                try db.run("DELETE FROM record_overlay WHERE source = ? AND key = ?", [.text(edit.source), .text(edit.key)])
                try db.run("UPDATE outbox SET key = ? WHERE source = ? AND key = ? AND state IN \(OutboxStore.open)",
                           [.text(key), .text(edit.source), .text(edit.key)])
            }
            let result = edit.operation == .delete ? nil : record?.record ?? shown
            if let etag = response.etag, let result {
                try db.run("INSERT OR REPLACE INTO record_etags (source, key, etag, record) VALUES (?, ?, ?, ?)",
                           [.text(edit.source), .text(key), .text(etag), .text(result)])
            }
            // The row's next edit is made on this one's result.
            try db.run("""
                UPDATE outbox SET base = coalesce(?3, base), base_etag = ?4
                WHERE id = (SELECT id FROM outbox WHERE source = ?1 AND key = ?2 AND state IN \(OutboxStore.open) ORDER BY seq LIMIT 1)
                """, [.text(edit.source), .text(key), .optionalText(record?.record), .optionalText(response.etag)])
            try store.settle(edit.source, key: key, record: result, now: now)
            try store.rebuildOverlay(source, key: key, now: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.applied += 1
            $0.lines.append("applied   \(edit.source) \(key)  \(edit.operation.rawValue) (\(note ?? "HTTP \(response.status)"))")
        }
    }

    /// The upstream's record is not the version the edit was made on: the edit waits, with base,
    /// local and remote kept, for `cache outbox resolve`; the row's later edits wait behind it.
    func conflict(_ claimed: Claimed, remote: String?, remoteETag: String?, status: Int, why: String) throws {
        let edit = claimed.edit
        try writing {
            try db.run("""
                UPDATE outbox SET state = 'conflict', attempts = attempts + 1, answer_status = ?, answer = ?, remote = ?, remote_etag = ?,
                    claim = NULL, request = NULL
                WHERE id = ?
                """, [.int(status), .text(why), .optionalText(remote), .optionalText(remoteETag), .text(edit.id)])
            try store.log(edit.id, "conflict", why, at: Date())
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.conflicts += 1
            $0.lines.append("conflict  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }

    /// Refused for good (a 4xx, or out of attempts): the overlay is reverted, the edit kept with
    /// the answer, and the row's later edits are held as blocked.
    func rejected(_ claimed: Claimed, status: Int?, answer: String, why: String) throws {
        let edit = claimed.edit
        guard let source = run.sources[edit.source] else { return }
        try writing {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'rejected', attempts = attempts + 1, answer_status = ?, answer = ?, claim = NULL, finished_at = ?
                WHERE id = ?
                """, [.optionalInt(status), .text(answer), .text(Timestamp.format(now)), .text(edit.id)])
            try store.log(edit.id, "rejected", why, at: now)
            for later in try db.query("SELECT id FROM outbox WHERE source = ? AND key = ? AND state = 'queued' AND seq > (SELECT seq FROM outbox WHERE id = ?)",
                                      [.text(edit.source), .text(edit.key), .text(edit.id)], row: { $0.text(0) ?? "" }) {
                try db.run("UPDATE outbox SET state = 'blocked' WHERE id = ?", [.text(later)])
                try store.log(later, "blocked", "made on edit \(edit.id), which was rejected", at: now)
            }
            try store.rebuildOverlay(source, key: edit.key, now: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.rejected += 1
            $0.lines.append("rejected  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }

    /// A failure that may pass: queued again after a backoff (or the upstream's `Retry-After`),
    /// the same request; rejected once the source's attempts are used.
    func again(_ claimed: Claimed, status: Int?, answer: FetchResponse?, why: String, source: Source) throws {
        let edit = claimed.edit
        let attempts = edit.attempts + 1
        guard attempts < source.writing.attempts else {
            return try rejected(claimed, status: status, answer: answer.map { Self.kept($0.body) } ?? why,
                                why: "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") ('--push-attempts'); the last: \(why)")
        }
        let wait = answer?.retryAfter ?? pusher.backoff.delay(afterFailures: attempts)
        // Marked tried before it is queued again: another worker must not take it back at once.
        run.tried.withLock { _ = $0.insert(edit.id) }
        try writing {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'queued', attempts = ?, answer_status = ?, answer = ?, claim = NULL, next_at = ? WHERE id = ?
                """, [.int(attempts), .optionalInt(status), .text(answer.map { Self.kept($0.body) } ?? why),
                      .text(Timestamp.format(now.addingTimeInterval(wait))), .text(edit.id)])
            try store.log(edit.id, "failed", "\(why); sent again after \(DurationText.format(Int(wait.rounded(.up)))) with the same request", at: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.lines.append("retrying  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }
}

/// A value guarded by a lock, for the workers of one push.
final class Locked<Value>: @unchecked Sendable {
    private var value_: Value
    private let lock = Condition()
    init(_ value: Value) { value_ = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value_)
    }
    var value: Value { withLock { $0 } }
}

/// The live push tokens of this process.
final class LiveTokens: @unchecked Sendable {
    private let tokens = Locked<Set<String>>([])
    func insert(_ token: String) { tokens.withLock { _ = $0.insert(token) } }
    func remove(_ token: String) { tokens.withLock { _ = $0.remove(token) } }
    func contains(_ token: String) -> Bool { tokens.withLock { $0.contains(token) } }
}
