import Dispatch
import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// What `cache serve` answers: the routes over the cache, with its freshness semantics. Every
/// answer is JSON unless the path ends in `.csv` or `.ndjson`; every refusal is
/// `{"error": "…"}` with the status that says whose mistake it was.
final class CacheServer: Sendable {
    struct Settings: Sendable {
        /// One file, or several read as one cache (sources sharded over primaries; read-only).
        var databasePaths: [String]
        var databasePath: String { databasePaths[0] }
        var environment: [String: String]
        var readOnly: Bool
        var token: String?
        var cors: String?
        var maxAge: Int?
        var maxLag: Int?
        var accessLog: Bool
        /// The network its refreshes fetch through (see `Context.fetcher`).
        var fetcher: any Fetching = Fetcher()

        /// Read-only (a replica, `--read-only`) opens change nothing, not even a migration.
        var readAccess: CacheDatabase.Access { readOnly ? .readOnly : .read }
    }

    /// A refusal: the status and the sentence.
    struct Refusal: Error {
        var status: Int
        var message: String
        var headers: [(String, String)] = []
    }

    static let defaultLimit = 100
    static let largestLimit = 1000
    /// How long `Prefer: wait=N` may hold a request.
    static let longestWait = 300.0
    /// Rows per query when a whole source is streamed as CSV or JSON Lines.
    static let streamPage = 1000

    let settings: Settings
    let refresher: Refresher
    let events: EventHub
    /// Read connections, one per request at a time, kept for the next, by file: at most
    /// `readerCount` in use, each with its own page cache, so 256 connections do not make 256.
    private let readers = Mutex<[String: [ReadConnection]]>([:])
    /// Of several files, which holds each source (found again when a name is not in it).
    private let holders = Mutex<[String: String]>([:])
    private let readerSlots = DispatchSemaphore(value: CacheServer.readerCount)
    static let readerCount = 8
    private let logLock = Mutex(())

    /// A read connection passed between request threads (one at a time).
    private final class ReadConnection: @unchecked Sendable {
        let database: CacheDatabase
        init(_ database: CacheDatabase) { self.database = database }
    }

    init(_ settings: Settings) {
        self.settings = settings
        let events = EventHub(databasePaths: settings.databasePaths, access: settings.readAccess, announcesLeases: !settings.readOnly)
        self.events = events
        refresher = Refresher(databasePath: settings.databasePath, environment: settings.environment, fetcher: settings.fetcher) { events.refreshing($0) }
    }

    // MARK: Requests

    func handle(_ request: HTTPServer.Request) -> HTTPServer.Response {
        let began = ContinuousClock.now
        var response: HTTPServer.Response
        do {
            response = try route(request)
        } catch let refusal as Refusal {
            response = Self.error(refusal.status, refusal.message, headers: refusal.headers)
        } catch let error as CacheError {
            response = Self.response(for: error)
        } catch let error as RowPageError {
            response = Self.error(400, error.message)
        } catch let error as UsageError {
            response = Self.error(400, error.message)
        } catch let error as SearchQueryError {
            response = Self.error(400, "the query is not one FTS5 can read (\(error.message)); quote words holding punctuation as \"phrases\"")
        } catch let error as DatabaseError where error.isBusy {
            response = Self.error(503, "the cache is busy; try again", headers: [("Retry-After", "1")])
        } catch {
            response = Self.error(500, "\(error)")
        }
        if let cors = settings.cors {
            response.headers += [("Access-Control-Allow-Origin", cors), ("Vary", "Origin"),
                                 ("Access-Control-Expose-Headers", "Link, ETag, Cache-Status, Age, Last-Modified, Location")]
        }
        if settings.accessLog {
            let milliseconds = Double((ContinuousClock.now - began) / .microseconds(1)) / 1000
            let line = "\(request.peer) \(TerminalSafe.escapeControl(request.method)) \(TerminalSafe.escapeControl(request.path)) \(response.status) \(String(format2: milliseconds)) ms\n"
            logLock.withLock { _ in _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) } }
        }
        return response
    }

    private func route(_ request: HTTPServer.Request) throws -> HTTPServer.Response {
        if request.method == "OPTIONS", settings.cors != nil {
            return HTTPServer.Response(status: 204, headers: [
                ("Access-Control-Allow-Methods", "GET, HEAD, POST"),
                ("Access-Control-Allow-Headers", "Authorization, If-None-Match, Prefer, Last-Event-ID"),
                ("Access-Control-Max-Age", "600"),
            ])
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        func only(_ methods: String..., then answer: () throws -> HTTPServer.Response) throws -> HTTPServer.Response {
            let allowed = methods.contains("GET") ? methods + ["HEAD"] : methods
            guard allowed.contains(request.method) else {
                throw Refusal(status: 405, message: "\(request.method) is not a method \(request.path) takes; it takes \(methods.joined(separator: " and "))",
                              headers: [("Allow", allowed.joined(separator: ", "))])
            }
            return try answer()
        }
        if parts == [""], LivePage.isWanted(by: request) {
            return try only("GET") { LivePage.response(request) }
        }
        try checkToken(request)
        switch parts.first {
        case "" where parts.count == 1:
            return try only("GET") { Self.json(200, Self.index, headers: [("Vary", "Accept")]) }
        case "healthz" where parts.count == 1:
            return try only("GET") { try healthz() }
        case "metrics" where parts.count == 1:
            return try only("GET") {
                let several = settings.databasePaths.count > 1
                let text = MetricsCommand.exposition(try withEveryReader { try MetricsCommand.part(of: $0, readOnly: settings.readOnly, several: several) })
                return HTTPServer.Response(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: .bytes(Array(text.utf8)))
            }
        case "events" where parts.count == 1:
            return try only("GET") { eventStream(request) }
        case "sources":
            break
        default:
            throw Refusal(status: 404, message: "no route \(request.path); see GET / for the routes")
        }
        switch parts.count {
        case 1: return try only("GET") { try sources(request) }
        case 2: return try only("GET") { try source(request, parts[1]) }
        default: break
        }
        let name = parts[1]
        // (A `where` binds to the last pattern of a case only: each case has one.)
        switch parts[2] {
        case let rows where parts.count == 3 && ["rows", "rows.csv", "rows.ndjson"].contains(rows):
            let format: RowsFormat = rows == "rows.csv" ? .csv : rows == "rows.ndjson" ? .ndjson : .json
            return try only("GET") { try self.rows(request, name, format) }
        case "rows" where parts.count >= 4:
            // A key may hold '/': everything after rows/ is the key, less a last "/log".
            if parts.count >= 5, parts.last == "log" {
                return try only("GET") { try rowLog(name, key: parts[3..<(parts.count - 1)].joined(separator: "/")) }
            }
            return try only("GET") { try row(request, name, key: parts[3...].joined(separator: "/")) }
        case "changes" where parts.count == 3:
            return try only("GET") { try changes(request, name) }
        case "refresh" where parts.count == 3:
            return try only("POST") { try refresh(request, name) }
        default:
            throw Refusal(status: 404, message: "no route \(request.path); see GET / for the routes")
        }
    }

    /// With `--token-env`, every request carries `Authorization: Bearer <token>`, compared in
    /// constant time (no early exit a client could time).
    private func checkToken(_ request: HTTPServer.Request) throws {
        guard let token = settings.token else { return }
        let given = request.header("Authorization").map { Substring($0) }
        let prefix = "bearer "  // the scheme in any case (RFC 9110)
        guard let given, given.prefix(prefix.count).lowercased() == prefix else {
            throw Refusal(status: 401, message: "this server needs 'Authorization: Bearer <token>'", headers: [("WWW-Authenticate", "Bearer")])
        }
        let offered = Array(given.dropFirst(prefix.count).utf8), expected = Array(token.utf8)
        var difference = UInt8(offered.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < offered.count ? offered[index] : 0) }
        guard difference == 0 else {
            throw Refusal(status: 401, message: "the bearer token is not this server's", headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
    }

    // MARK: Helpers

    /// The query's arguments, or a 400 when one is not text.
    func arguments(_ request: HTTPServer.Request) throws -> [(name: String, value: String?)] {
        guard let arguments = request.arguments else { throw Refusal(status: 400, message: "a query argument is not UTF-8 text") }
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

    /// A reader of the file that holds `source`. Of several files, the one noted for it; when
    /// that one no longer has it (moved to another primary's file), the files are looked at
    /// again, once.
    func withReader<T>(of source: String, _ body: (CacheDatabase) throws -> T) throws -> T {
        guard settings.databasePaths.count > 1 else { return try withReader(path: settings.databasePath, body) }
        if let noted = holders.withLock({ $0[source] }) {
            do { return try withReader(path: noted, body) } catch CacheError.noSuchSource(source) {}
        }
        return try withReader(path: try findHolder(of: source), body)
    }

    /// A reader of each file in turn (one, or several read as one), in `--db` order; one at a
    /// time, so a request never waits for a second reader while it holds one.
    func withEveryReader<T>(_ body: (CacheDatabase) throws -> T) throws -> [T] {
        try settings.databasePaths.map { try withReader(path: $0, body) }
    }

    private func withReader<T>(path: String, _ body: (CacheDatabase) throws -> T) throws -> T {
        readerSlots.wait()
        defer { readerSlots.signal() }
        let reader = try readers.withLock { $0[path]?.popLast() } ?? ReadConnection(CacheDatabase(path: path, access: settings.readAccess))
        // A snapshot's lock would keep Litestream's follower from applying for good (and its
        // reads would never see the update): closed after the request instead.
        defer { if !reader.database.isSnapshot { readers.withLock { $0[path, default: []].append(reader) } } }
        return try body(reader.database)
    }

    /// Which of several files holds `source`, found by reading each file's sources (and noted
    /// for every source, for the next request): unknown, a 404; in two files, a configuration
    /// to mend.
    private func findHolder(of source: String) throws -> String {
        var found: [String: [String]] = [:]
        for path in settings.databasePaths {
            for name in try withReader(path: path, { try SourceStore($0).all().map(\.name) }) { found[name, default: []].append(path) }
        }
        holders.withLock { $0 = found.compactMapValues { $0.count == 1 ? $0[0] : nil } }
        guard let paths = found[source] else { throw CacheError.noSuchSource(source) }
        guard paths.count == 1 else { throw Shards.inTwoFiles(source, paths[0], paths[1]) }
        return paths[0]
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

    static func json(_ status: Int, _ value: JSONValue, headers: [(String, String)] = []) -> HTTPServer.Response {
        var text = ""
        value.write(to: &text)
        return HTTPServer.Response(status: status, headers: [("Content-Type", "application/json")] + headers, body: .bytes(Array((text + "\n").utf8)))
    }

    static func error(_ status: Int, _ message: String, headers: [(String, String)] = []) -> HTTPServer.Response {
        json(status, .object([("error", .string(message))]), headers: headers)
    }

    static func response(for error: CacheError) -> HTTPServer.Response {
        switch error {
        case .noSuchSource, .noSuchRow, .noSuchRun: return Self.error(404, error.description)
        case .noDatabase: return Self.error(503, error.description, headers: [("Retry-After", "60")])
        default: return Self.error(500, error.description)
        }
    }
}

extension String {
    /// `12.3`: one decimal.
    init(format2 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
