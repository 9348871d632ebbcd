import Dispatch
import FoundationEssentials

/// Sends queued edits to the upstream (`cache push`, and every `cache sync` before it fetches).
///
/// A row's edits go in order, one in flight at a time; different rows go side by side, up to
/// `workers` at once, each worker on its own connection to the upstream. An edit is claimed in
/// one `BEGIN IMMEDIATE` transaction, so two pushes never send the same edit at once; the claim
/// names this process (pid and a token), and an edit whose claimer died is queued again by the
/// next push.
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
        let waiting = Int(try first.connection.scalarInt("SELECT count(*) FROM outbox WHERE state IN ('queued', 'in_flight') AND source IN (SELECT value FROM json_each(?))",
                                                      [.text(run.names)]) ?? 0)
        guard waiting > 0 else { return run.report.value }
        run.batch = max(1, min(PushWorker.batch, waiting / workers))
        let failure = Locked<Error?>(nil)
        // Each worker a thread of its own (they wait on the network, not the CPU). They share
        // one database connection: their transactions take turns anyway (`Run.writes`), and a
        // connection of each would find its page cache dropped by every other's commit.
        let pusher = self
        nonisolated(unsafe) let shared = first.connection
        let threads = (0..<workers).map { _ in
            JoinedThread {
                do {
                    var worker = PushWorker(pusher: pusher, run: run, db: shared)
                    while try worker.pushBatch() {}
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
        /// Edits a worker claims at once: `PushWorker.batch`, or fewer when the queue is short.
        var batch = PushWorker.batch
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

        var claim: String { "\(Processes.current):\(token)" }
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

/// The live push tokens of this process.
final class LiveTokens: @unchecked Sendable {
    private let tokens = Locked<Set<String>>([])
    func insert(_ token: String) { tokens.withLock { _ = $0.insert(token) } }
    func remove(_ token: String) { tokens.withLock { _ = $0.remove(token) } }
    func contains(_ token: String) -> Bool { tokens.withLock { $0.contains(token) } }
}
