import Dispatch
import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// What `cache serve` answers: the route table over the cache, behind one chain of middleware.
/// Every answer is JSON unless the path ends in `.csv` or `.ndjson`; every refusal is
/// `{"error": "…"}` with the status that says whose mistake it was. `respond(to:)` is the whole
/// server but the socket: the tests call it in this process.
package final class CacheServer: Sendable {
    package struct Settings: Sendable {
        /// One file, or several read as one cache (sources sharded over primaries; read-only).
        package var databasePaths: [String]
        package var databasePath: String { databasePaths[0] }
        package var environment: [String: String] = [:]
        package var readOnly = false
        package var token: String?
        /// Origins a page may read from (`*`: any, without the token) and change from.
        package var cors: [String] = []
        /// Host names the server answers besides its listen address and `localhost`.
        package var hostNames: [String] = []
        /// The address it listens on (an IP literal): a `Host` of it is always answered.
        package var listenAddress = "127.0.0.1"
        package var maxAge: Int?
        package var maxLag: Int?
        package var accessLog: AccessLogFormat?
        /// A refresh asked for within this many seconds of the source's last confirmation
        /// answers with it instead of fetching again.
        package var refreshInterval = 10
        /// The network its refreshes fetch through (the CLI's `Context.fetcher`).
        package var fetcher: any Fetching = Fetcher()
        /// Where the access log goes: standard error, or a test's buffer.
        package var log: @Sendable (String) -> Void = { line in _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) } }

        package init(databasePaths: [String]) {
            self.databasePaths = databasePaths
        }

        /// Read-only (a replica, `--read-only`) opens change nothing, not even a migration.
        var readAccess: CacheDatabase.Access { readOnly ? .readOnly : .read }
    }

    static let defaultLimit = 100
    static let largestLimit = 1000
    /// How long `Prefer: wait=N` may hold a request.
    static let longestWait = 300.0
    /// Rows per query when a whole source is streamed as CSV or JSON Lines.
    static let streamPage = 1000

    package let settings: Settings
    package let refresher: Refresher
    package let events: EventHub
    package let requestMetrics: RequestMetrics
    let sessions = Sessions()
    let readers: ReaderPool
    /// Each source's rows counted by when they were seen, taken as syncs land: `/sources` and
    /// `/metrics` then cost the same on a million rows as on ten.
    let censuses = RowCensus.Kept()
    /// JSON pages of rows, kept until anything they say changes.
    let pages = PageMemo()
    /// The file's WAL index for the hit path, and the file it was looked for in.
    let walIndex = Locked<(index: WALIndex?, file: FileIdentity?, lookedAt: ContinuousClock.Instant)>((nil, nil, .now))
    let table: RouteTable
    private let middleware: [Middleware]
    private let accessLog: AccessLog?

    package init(_ settings: Settings) {
        self.settings = settings
        let censuses = censuses
        let events = EventHub(databasePaths: settings.databasePaths, access: settings.readAccess, announcesLeases: !settings.readOnly) {
            censuses.take($0, sources: $1)
        }
        self.events = events
        refresher = Refresher(databasePath: settings.databasePath, environment: settings.environment, fetcher: settings.fetcher) { events.refreshing($0) }
        readers = ReaderPool(paths: settings.databasePaths, access: settings.readAccess)
        table = RouteTable(Self.routes)
        requestMetrics = RequestMetrics()
        accessLog = settings.accessLog.map { AccessLog(format: $0, write: settings.log) }
        middleware = Middleware.chain(for: settings, metrics: requestMetrics, accessLog: accessLog, sessions: sessions)
    }

    /// The answer to one request: the middleware in order, then the route.
    package func respond(to request: HTTPRequest) -> HTTPResponse {
        let match = table.match(request)
        return Middleware.run(middleware[...], request, match.route) { self.table.dispatch($0, match, on: self) }
    }

    /// What is refused as soon as a request's headers are in, before its body is read: a
    /// request whose framing is ambiguous (`Middleware.framingProblem`), or whose body is
    /// announced larger than any route takes. Answered through the chain (whose `framing`
    /// refuses the first kind), so it is logged and counted as every answer is.
    package func screen(_ request: HTTPRequest) -> HTTPResponse? {
        let tooLarge = request.header("Content-Length").flatMap { Int($0) }.map { $0 > HTTPServer.largestBody } ?? false
        guard tooLarge || Middleware.framingProblem(request) != nil else { return nil }
        var answer = Middleware.run(middleware[...], request, table.match(request).route) { _ in
            .error(413, "the request body is too large: no route takes one over \(HTTPServer.largestBody / 1024) KiB", headers: [("Connection", "close")])
        }
        // Its body is never read: whatever refused it (a host, the token), the connection ends.
        if answer.header("Connection") == nil { answer.headers.append(("Connection", "close")) }
        return answer
    }

    /// A connection cut off before its first request came whole (its line and headers took
    /// longer than `HTTPServer.Limits.headerSeconds`; the HTTP layer answered 408 and closed
    /// it): logged and counted as every answer is, with no method or path, for the time it had.
    package func cutOff(peer: String, seconds: Double) {
        requestMetrics.record(route: nil, method: "-", status: 408, seconds: seconds)
        accessLog?.log(HTTPRequest(method: "-", path: "-", peer: peer), Self.tooSlow, milliseconds: seconds * 1000)
    }

    /// What the HTTP layer answers a request whose line and headers came too slowly.
    package static var tooSlow: HTTPResponse { .error(408, "the request took too long to come; send its line, headers and body at once") }

    // MARK: Helpers the routes share

    /// The query's arguments, or a 400 when one is not text.
    func arguments(_ request: HTTPRequest) throws -> [(name: String, value: String?)] {
        guard let arguments = request.query else { throw Refusal(status: 400, message: "a query argument is not UTF-8 text") }
        return arguments
    }

    /// Starts the refresh behind a stale read, as `cache list` does (never for a past moment, nor
    /// when read-only; the lease, backoff and missing tokens honoured): whether one is in flight,
    /// this server's or another process's (a live holder of the source's lease, as the events
    /// announce it; not on a read-only copy, whose leases are another machine's).
    func refreshBehind(_ database: CacheDatabase, _ source: Source, freshness: inout Freshness, pastMoment: Bool) throws -> Bool {
        var refreshing = try refresher.flight(source.name) != nil
            || (!settings.readOnly && SyncLease(database).currentHolder(source.name) != nil)
        guard freshness.version.stale, !pastMoment, !settings.readOnly, !refreshing else { return refreshing }
        switch try RefreshBehindRead(database, source: source.name).plan(refresh: true, environment: settings.environment) {
        case .start:
            freshness.startedRefresh = refresher.start(source.name, onlyIfStale: true).started
            refreshing = true
        case .join:
            refreshing = true
        case .none, .backingOff, .missingToken:
            break
        }
        return refreshing
    }

    /// The file's WAL index, while the hit path (`keptAnswer`) may be taken: one file, written
    /// here (a follower's pages carry its lag, and its file is replaced under it), in WAL mode.
    /// Looked for when there is none yet (`noteWALIndex`).
    func currentWALIndex() -> WALIndex? {
        guard settings.databasePaths.count == 1, !settings.readOnly else { return nil }
        if let index = walIndex.withLock({ $0.index }) { return index }
        noteWALIndex()
        return walIndex.withLock { $0.index }
    }

    /// Looks for the WAL index of the file the path names now: once for each file (a restored
    /// file is another), and again a minute after a look that found none (a file in rollback
    /// mode has none; a file being recovered may have none yet).
    func noteWALIndex() {
        guard settings.databasePaths.count == 1, !settings.readOnly, let file = FileIdentity.of(settings.databasePath) else { return }
        let now = ContinuousClock.now
        guard walIndex.withLock({ noted in
            noted.file != file || noted.index == nil && now - noted.lookedAt > .seconds(60)
        }) else { return }
        let index = WALIndex(path: settings.databasePath)
        walIndex.withLock { $0 = (index?.identity == file ? index : nil, file, now) }
    }

    /// A reader of the file that holds `source`.
    func withReader<T>(of source: String, _ body: (CacheDatabase) throws -> T) throws -> T {
        try readers.withReader(of: source, body)
    }

    /// A reader of the file that holds `source`, reading one snapshot throughout (`unless`:
    /// as it comes).
    func withSnapshot<T>(of source: String, unless: Bool = false, _ body: (CacheDatabase) throws -> T) throws -> T {
        try readers.withReader(of: source) { database in
            unless ? try body(database) : try database.connection.inReadTransaction { try body(database) }
        }
    }

    /// A reader of each file in turn (one, or several read as one), in `--db` order.
    func withEveryReader<T>(_ body: (CacheDatabase) throws -> T) throws -> [T] {
        try readers.withEveryReader(body)
    }

    static func flag(_ value: String?) -> Bool? {
        switch value {
        case nil, "1", "true": true
        case "0", "false": false
        default: nil
        }
    }

    /// `path?name=value&…`, each part escaped.
    static func url(path: String, _ arguments: [(name: String, value: String?)]) -> String {
        let escapedPath = path.split(separator: "/", omittingEmptySubsequences: false).map { String($0).percentEncoded() }.joined(separator: "/")
        return escapedPath + "?" + arguments.map { $0.name.percentEncoded() + ($0.value.map { "=" + $0.percentEncoded() } ?? "") }.joined(separator: "&")
    }
}

/// Read connections, one per request at a time, kept for the next, by file: at most `count` in
/// use, each with its own page cache, so 256 connections do not make 256. Of several files, it
/// notes which holds each source.
final class ReaderPool: @unchecked Sendable {
    static let count = 8
    private let paths: [String]
    private let access: CacheDatabase.Access
    /// The readers not in use, by path, under a plain mutex (`lock`); at most `count` in use, by
    /// a semaphore, which lets waiters in about in turn (a condition variable's signal let new
    /// arrivals barge past the woken, and the tail at 256 connections grew).
    private var idle: [String: [ReadConnection]] = [:]
    private let slots = DispatchSemaphore(value: ReaderPool.count)
    private let lock = Condition()
    private let holders = Locked<[String: String]>([:])
    /// The paths a reader was opened at: one that then names no file was deleted or moved away.
    private let opened = Locked<Set<String>>([])

    /// A read connection passed between request threads (one at a time).
    private final class ReadConnection: @unchecked Sendable {
        let database: CacheDatabase
        init(_ database: CacheDatabase) { self.database = database }
    }

    init(paths: [String], access: CacheDatabase.Access) {
        self.paths = paths
        self.access = access
    }

    /// A reader of the file that holds `source`. Of several files, the one noted for it; when
    /// that one no longer has it (moved to another primary's file), the files are looked at
    /// again, once.
    func withReader<T>(of source: String, _ body: (CacheDatabase) throws -> T) throws -> T {
        guard paths.count > 1 else { return try withReader(path: paths[0], body) }
        if let noted = holders.withLock({ $0[source] }) {
            do { return try withReader(path: noted, body) } catch CacheError.noSuchSource(source) {}
        }
        return try withReader(path: try findHolder(of: source), body)
    }

    /// A reader of each file in turn, in `--db` order; one at a time, so a request never waits
    /// for a second reader while it holds one.
    func withEveryReader<T>(_ body: (CacheDatabase) throws -> T) throws -> [T] {
        try paths.map { try withReader(path: $0, body) }
    }

    private func withReader<T>(path: String, _ body: (CacheDatabase) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        lock.lock()
        var kept = idle[path]?.popLast()
        lock.unlock()
        let reader = try current(at: path, kept: &kept) ?? open(path)
        // A snapshot's lock would keep Litestream's follower from applying for good (and its
        // reads would never see the update): closed after the request instead.
        defer {
            if !reader.database.isSnapshot {
                lock.lock()
                idle[path, default: []].append(reader)
                lock.unlock()
            }
        }
        return try body(reader.database)
    }

    /// A kept reader of the file `path` names now (`kept` first). Readers of a file that is no
    /// longer there (moved aside for a restore, replaced, deleted) are closed: a follower
    /// restored after damage serves the restored file at once, and a primary whose file was
    /// deleted answers 503 (`noDatabase`) rather than the rows of a file nobody can reach. One
    /// `stat` a request.
    private func current(at path: String, kept: inout ReadConnection?) -> ReadConnection? {
        while let reader = kept {
            if reader.database.isStillAtPath { return reader }
            lock.lock()
            kept = idle[path]?.popLast()
            lock.unlock()
        }
        return nil
    }

    private func open(_ path: String) throws -> ReadConnection {
        let database: CacheDatabase
        do {
            database = try CacheDatabase(path: path, access: access)
        } catch {
            guard case .noDatabase = error, opened.withLock({ $0.contains(path) }) else { throw error }
            throw Refusal(status: 503, message: "the cache file \(path) is gone (deleted, or moved away) since this server read it; put it back or restore it, and this server reads it at once",
                          headers: [("Retry-After", "60")])
        }
        opened.withLock { _ = $0.insert(path) }
        return ReadConnection(database)
    }

    /// Which of several files holds `source`, found by reading each file's sources (and noted
    /// for every source, for the next request): unknown, a 404; in two files, a configuration
    /// to mend.
    private func findHolder(of source: String) throws -> String {
        var found: [String: [String]] = [:]
        for path in paths {
            for name in try withReader(path: path, { try SourceStore($0).all().map(\.name) }) { found[name, default: []].append(path) }
        }
        holders.withLock { $0 = found.compactMapValues { $0.count == 1 ? $0[0] : nil } }
        guard let paths = found[source] else { throw CacheError.noSuchSource(source) }
        guard paths.count == 1 else { throw CacheError.inTwoFiles(source, paths[0], paths[1]) }
        return paths[0]
    }
}

extension String {
    /// `12.3`: one decimal.
    init(format2 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
