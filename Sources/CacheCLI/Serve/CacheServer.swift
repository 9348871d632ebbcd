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
        var databasePath: String
        var environment: [String: String]
        var readOnly: Bool
        var token: String?
        var cors: String?
        var maxAge: Int?
        var accessLog: Bool

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
    /// Read connections, one per request at a time, kept for the next: at most `readerCount`,
    /// each with its own page cache, so 256 connections do not make 256 of them.
    private let readers = Mutex<[ReadConnection]>([])
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
        let events = EventHub(databasePath: settings.databasePath, access: settings.readAccess)
        self.events = events
        refresher = Refresher(databasePath: settings.databasePath, environment: settings.environment) { events.refreshing($0) }
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
        try checkToken(request)
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        func only(_ methods: String..., then answer: () throws -> HTTPServer.Response) throws -> HTTPServer.Response {
            let allowed = methods.contains("GET") ? methods + ["HEAD"] : methods
            guard allowed.contains(request.method) else {
                throw Refusal(status: 405, message: "\(request.method) is not a method \(request.path) takes; it takes \(methods.joined(separator: " and "))",
                              headers: [("Allow", allowed.joined(separator: ", "))])
            }
            return try answer()
        }
        switch parts.first {
        case "" where parts.count == 1:
            return try only("GET") { Self.json(200, Self.index) }
        case "healthz" where parts.count == 1:
            return try only("GET") { try healthz() }
        case "metrics" where parts.count == 1:
            return try only("GET") {
                let text = try withReader { MetricsCommand.exposition(try CacheReader($0).metrics()) }
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

    // MARK: Routes

    static let index: JSONValue = .object([
        ("routes", .array([
            "GET /sources", "GET /sources/NAME", "GET /sources/NAME/rows", "GET /sources/NAME/rows.csv",
            "GET /sources/NAME/rows.ndjson", "GET /sources/NAME/rows/KEY", "GET /sources/NAME/rows/KEY/log",
            "GET /sources/NAME/changes?since=RUN", "POST /sources/NAME/refresh", "GET /events", "GET /healthz", "GET /metrics",
        ].map(JSONValue.string))),
    ])

    private func sources(_ request: HTTPServer.Request) throws -> HTTPServer.Response {
        try withReader { database in
            let reader = CacheReader(database)
            let statuses = try reader.status()
            let versions = try statuses.map { try reader.rowsVersion(of: $0.source) }
            let etag = "\"" + Freshness.hash(versions.map(\.tag).joined(separator: "\n")) + "\""
            let freshFor = versions.map(\.freshFor).min() ?? 0
            let headers = [("ETag", etag), ("Cache-Control", "max-age=\(freshFor)")]
            if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPServer.Response(status: 304, headers: headers) }
            let body = JSONValue.array(statuses.map { StatusCommand.json($0, readOnly: settings.readOnly, database: settings.databasePath) })
            return Self.json(200, body, headers: headers)
        }
    }

    private func source(_ request: HTTPServer.Request, _ name: String) throws -> HTTPServer.Response {
        try withReader { database in
            let reader = CacheReader(database)
            let source = try SourceStore(database).named(name)
            let freshness = Freshness(version: try reader.rowsVersion(of: source))
            let etag = freshness.etag(query: "source")
            let headers = [("ETag", etag)] + freshness.headers
            if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPServer.Response(status: 304, headers: headers) }
            return Self.json(200, StatusCommand.json(try reader.status(of: source), readOnly: settings.readOnly, database: settings.databasePath),
                             headers: headers)
        }
    }

    enum RowsFormat { case json, csv, ndjson }

    private func rows(_ request: HTTPServer.Request, _ name: String, _ format: RowsFormat) throws -> HTTPServer.Response {
        let arguments = try self.arguments(request)
        var page = RowPage(limit: format == .json ? Self.defaultLimit : Int(Int32.max))
        var query: String?
        for (parameter, value) in arguments {
            switch parameter {
            case "limit":
                guard let value, let limit = Int(value), (1...Self.largestLimit).contains(limit) else {
                    throw Refusal(status: 400, message: "'limit=\(value ?? "")' is not a number of rows from 1 to \(Self.largestLimit)")
                }
                page.limit = limit
            case "stale":
                guard let flag = Self.flag(value) else { throw Refusal(status: 400, message: "'stale=\(value ?? "")' is not 1, 0, true or false") }
                page.staleOnly = flag
            case "q":
                guard let value, !value.isEmpty else { throw Refusal(status: 400, message: "'q=' needs a search query, as 'cache search' takes it") }
                query = value
            case "as_of":
                page.asOf = try CommandParser.moment(value ?? "", "as_of", "serve")
            case "after":
                guard let value, !value.isEmpty else { throw Refusal(status: 400, message: "'after=' needs the cursor a page's 'next' link gives") }
                page.after = value
            default:
                guard let value else { throw Refusal(status: 400, message: "'\(parameter)' is not a parameter of rows: use limit, stale, q, as_of, after, or COLUMN=OP.VALUE") }
                page.filters.append(try RowFilter(column: parameter, value))
            }
        }
        if query != nil, !page.filters.isEmpty || page.after != nil || page.asOf != nil || page.staleOnly || format != .json {
            throw Refusal(status: 400, message: "'q=' searches the rows as they are now, in the JSON rows alone, and takes no filters, stale, as_of or after")
        }
        return try withReader { database in
            let reader = CacheReader(database)
            let source = try SourceStore(database).named(name)
            if let asOf = page.asOf {
                do {
                    try HistoryStore(database).checkAnswerable(source: source.name, at: asOf)
                } catch let error as CacheError {
                    throw Refusal(status: 400, message: error.description)
                }
            }
            var freshness = Freshness(version: try reader.rowsVersion(of: source))
            let refreshing = try refreshBehind(database, source, freshness: &freshness, pastMoment: page.asOf != nil)
            // The query as given, each part escaped: `?limit=5&limit=10` is not `?limit=10&limit=5`.
            let canonical = Self.url(path: request.path, arguments)
            let etag = freshness.etag(query: canonical)
            var headers = [("ETag", etag)] + freshness.headers
            if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPServer.Response(status: 304, headers: headers) }
            let asRecords = source.kind.keepsRecords && format != .csv
            switch format {
            case .json:
                var bytes = Array("{\"source\": ".utf8)
                var text = ""
                JSONValue.quote(source.name, into: &text)
                bytes += Array(text.utf8) + Array(", \"stale\": \(freshness.version.stale), \"refreshing\": \(refreshing), \"rows\": [".utf8)
                var count = 0
                let write = { (columns: [String], row: Statement, writer: inout RowBytes?) in
                    let rowWriter = writer ?? Self.rowWriter(columns, asRecords: asRecords)
                    writer = rowWriter
                    if count > 0 { bytes += Array(",\n".utf8) } else { bytes += Array("\n".utf8) }
                    rowWriter.json(row, into: &bytes)
                    count += 1
                }
                var writer: RowBytes?
                var next: String?
                if let query {
                    guard source.searchable else {
                        throw Refusal(status: 400, message: "search is off for '\(source.name)'; 'cache sources set \(source.name) --search on' indexes its rows")
                    }
                    for hit in try reader.search(source, query: query, limit: page.limit) where count < page.limit {
                        try reader.forEachRow(of: source, document: hit.document, limit: page.limit - count, asRecords: asRecords) { write($0, $1, &writer) }
                    }
                } else {
                    next = try reader.forEachRow(of: source, page: page, asRecords: asRecords) { write($0, $1, &writer) }
                }
                let nextURL = next.map { Self.url(path: request.path, arguments.filter { $0.name != "after" } + [("after", $0)]) }
                bytes += Array("\(count > 0 ? "\n" : "")], \"next\": ".utf8)
                text = ""
                JSONValue.optional(nextURL).write(to: &text)
                bytes += Array((text + "}\n").utf8)
                // (A next URL past 4 KiB stays in the body: headers share the request's memory.)
                if let nextURL, nextURL.utf8.count <= 4096 { headers.append(("Link", "<\(nextURL)>; rel=\"next\"")) }
                return HTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")] + headers, body: .bytes(bytes))
            case .csv, .ndjson:
                // Every row, page by page (each its own query, in key order): memory stays flat.
                // The filters and the cursor are checked first, so a mistake is a 400, not a
                // stream cut short.
                try reader.check(page, of: source)
                var remaining = page.limit
                var cursor = page.after
                var header = format == .csv
                let columns = try reader.viewColumns(of: source)
                let stream = { () throws -> [UInt8]? in
                    if header {
                        header = false
                        return Array(CSVText.row(columns).utf8)
                    }
                    guard remaining > 0 else { return nil }
                    var chunk = page
                    chunk.limit = min(remaining, Self.streamPage)
                    chunk.after = cursor
                    var bytes: [UInt8] = []
                    var writer: RowBytes?
                    var count = 0
                    let next = try self.withReader { database in
                        try CacheReader(database).forEachRow(of: source, page: chunk, asRecords: asRecords) { columns, row in
                            let rowWriter = writer ?? Self.rowWriter(columns, asRecords: asRecords)
                            writer = rowWriter
                            if format == .csv { rowWriter.csv(row, into: &bytes) } else { rowWriter.json(row, into: &bytes); bytes.append(0x0A) }
                            count += 1
                        }
                    }
                    remaining = next == nil ? 0 : remaining - count
                    cursor = next
                    return bytes.isEmpty ? nil : bytes
                }
                let type = format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson"
                return HTTPServer.Response(status: 200, headers: [("Content-Type", type)] + headers, body: .stream(stream))
            }
        }
    }

    private func row(_ request: HTTPServer.Request, _ name: String, key: String) throws -> HTTPServer.Response {
        try withReader { database in
            let reader = CacheReader(database)
            let source = try SourceStore(database).named(name)
            var freshness = Freshness(version: try reader.rowsVersion(of: source))
            _ = try refreshBehind(database, source, freshness: &freshness, pastMoment: false)
            let etag = freshness.etag(query: "row\n" + key)
            let headers = [("ETag", etag)] + freshness.headers
            if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPServer.Response(status: 304, headers: headers) }
            let asRecords = source.kind.keepsRecords
            var bytes: [UInt8] = []
            let page = RowPage(limit: 1, filters: [try RowFilter(column: reader.pageKey(of: source), "eq." + key)])
            _ = try reader.forEachRow(of: source, page: page, asRecords: asRecords) { columns, row in
                Self.rowWriter(columns, asRecords: asRecords).json(row, into: &bytes)
            }
            guard !bytes.isEmpty else { throw CacheError.noSuchRow(key, source: name) }
            return HTTPServer.Response(status: 200, headers: [("Content-Type", "application/json")] + headers, body: .bytes(bytes + [0x0A]))
        }
    }

    private func rowLog(_ name: String, key: String) throws -> HTTPServer.Response {
        try withReader { database in
            let source = try SourceStore(database).named(name)
            return Self.json(200, .array(try LogCommand.versions(database, source, key: key).map(LogCommand.json)))
        }
    }

    private func changes(_ request: HTTPServer.Request, _ name: String) throws -> HTTPServer.Response {
        var selection = HistoryStore.Selection.latest
        for (parameter, value) in try arguments(request) {
            guard parameter == "since" else { throw Refusal(status: 400, message: "'\(parameter)' is not a parameter of changes: use since=RUN") }
            guard let value, let run = Int(value), run >= 0 else {
                throw Refusal(status: 400, message: "'since=\(value ?? "")' is not a run number (from 'cache history', or an event's id)")
            }
            selection = .afterRun(run)
        }
        return try withReader { database in
            _ = try SourceStore(database).named(name)
            return Self.json(200, .array(try HistoryStore(database).changes(source: name, selection).map(InspectCommands.json)))
        }
    }

    private func refresh(_ request: HTTPServer.Request, _ name: String) throws -> HTTPServer.Response {
        _ = try withReader { try SourceStore($0).named(name) }
        guard !settings.readOnly else {
            throw Refusal(status: 409, message: "this server is read-only (--read-only, CACHE_READ_ONLY or a Litestream replica): its primary refreshes")
        }
        var wait: Double?
        if let prefer = request.header("Prefer") {
            for preference in prefer.split(separator: ",") {
                // RFC 7240: `wait=2`, `wait="2"`, and parameters after a `;`, which wait has none of.
                let token = preference.split(separator: ";", maxSplits: 1).first ?? ""
                let parts = token.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
                guard parts.first?.lowercased() == "wait" else { continue }
                let quoted = parts.count == 2 ? String(parts[1]) : ""
                let value = quoted.count >= 2 && quoted.hasPrefix("\"") && quoted.hasSuffix("\"") ? String(quoted.dropFirst().dropLast()) : quoted
                // Decimal digits and a point only: Double would also read hex and "nan".
                guard !value.isEmpty, value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                      let seconds = Double(value), seconds.isFinite, seconds >= 0 else {
                    throw Refusal(status: 400, message: "'Prefer: \(preference.trimmingSpaces())' is not wait=SECONDS")
                }
                wait = min(seconds, Self.longestWait)
            }
        }
        let (flight, started) = refresher.start(name, onlyIfStale: false)
        let location = [("Location", "/sources/" + name.percentEncoded())]
        if let wait, let report = flight.wait(seconds: wait) {
            return Self.json(200, SyncCommand.json(report), headers: location + [("Preference-Applied", "wait=\(Int(wait))")])
        }
        return Self.json(202, .object([("source", .string(name)), ("refreshing", .bool(true)), ("started", .bool(started))]), headers: location)
    }

    private func healthz() throws -> HTTPServer.Response {
        let statuses = try withReader { try CacheReader($0).status() }
        let verdicts = StatusCommand.verdicts(statuses, maxAge: settings.maxAge)
        let ok = verdicts.allSatisfy(\.ok) && !(statuses.isEmpty && settings.maxAge != nil)
        let body = JSONValue.object([("ok", .bool(ok)), ("sources", .array(verdicts.map(StatusCommand.json)))])
        // A monitor asks again after a minute: a sync lands on cron's schedule, not sooner.
        return Self.json(ok ? 200 : 503, body, headers: ok ? [("Cache-Control", "no-store")] : [("Cache-Control", "no-store"), ("Retry-After", "60")])
    }

    private func eventStream(_ request: HTTPServer.Request) -> HTTPServer.Response {
        let lastEventID = request.header("Last-Event-ID").flatMap { Int($0.trimmingSpaces()) }
        return HTTPServer.Response(status: 200, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
        ], body: .stream(events.stream(lastEventID: lastEventID) { request.peerIsGone }))
    }

    // MARK: Helpers

    /// The query's arguments, or a 400 when one is not text.
    private func arguments(_ request: HTTPServer.Request) throws -> [(name: String, value: String?)] {
        guard let arguments = request.arguments else { throw Refusal(status: 400, message: "a query argument is not UTF-8 text") }
        return arguments
    }

    /// Starts the refresh behind a stale read, as `cache list` does (never for a past moment, nor
    /// when read-only; the lease, backoff and missing tokens honoured): whether one is in flight.
    private func refreshBehind(_ database: CacheDatabase, _ source: Source, freshness: inout Freshness, pastMoment: Bool) throws -> Bool {
        var refreshing = refresher.flight(source.name) != nil
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

    private func withReader<T>(_ body: (CacheDatabase) throws -> T) throws -> T {
        readerSlots.wait()
        defer { readerSlots.signal() }
        let reader = try readers.withLock { $0.popLast() } ?? ReadConnection(CacheDatabase(path: settings.databasePath, access: settings.readAccess))
        defer { readers.withLock { $0.append(reader) } }
        return try body(reader.database)
    }

    static func rowWriter(_ columns: [String], asRecords: Bool) -> RowBytes {
        RowBytes(names: columns, columns: Array(columns.indices), boolColumn: columns.firstIndex(of: "stale"),
                 rawColumn: asRecords ? columns.firstIndex(of: "record") : nil)
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
