import FoundationEssentials
import OfflineCache

/// The routes' handlers, one function each; `CacheServer.routes` declares them.
extension CacheServer {
    func sources(_ request: HTTPRequest) throws -> HTTPResponse {
        // Each file's sources (of several, one after another), with the file's lag.
        let files = try withEveryReader { database in
            let reader = CacheReader(database)
            let statuses = try reader.status(counting: .kept(censuses))
            return (statuses: statuses, versions: try statuses.map { try reader.rowsVersion(of: $0.source) },
                    lag: ReplicaLag.of(database, readOnly: settings.readOnly), path: database.path)
        }
        let body = JSONValue.array(files.flatMap { file in
            file.statuses.map { $0.json(readOnly: settings.readOnly, database: file.path, replicaLag: file.lag) }
        })
        // The body itself names its version, less what ticks with the clock: weak (RFC 9110
        // §8.8.1), and a 304 never replays a status that changed. No shared cache keeps it.
        let etag = Freshness.weakTag(of: body)
        let headers: [(name: String, value: String)] = [("ETag", etag), ("Cache-Control", "no-cache")]
        if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPResponse(status: 304, headers: headers) }
        return HTTPResponse.json(200, body, headers: headers)
    }

    func source(_ request: HTTPRequest, _ name: String) throws -> HTTPResponse {
        try withReader(of: name) { database in
            let reader = CacheReader(database)
            let source = try SourceStore(database).named(name)
            let body = try reader.status(of: source, counting: .kept(censuses)).json(readOnly: settings.readOnly, database: database.path,
                                                          replicaLag: ReplicaLag.of(database, readOnly: settings.readOnly))
            let etag = Freshness.weakTag(of: body)
            let headers: [(name: String, value: String)] = [("ETag", etag), ("Cache-Control", "no-cache")]
            if Freshness.matches(request.header("If-None-Match"), etag) { return HTTPResponse(status: 304, headers: headers) }
            return HTTPResponse.json(200, body, headers: headers)
        }
    }

    enum RowsFormat { case json, csv, ndjson }

    func rows(_ request: HTTPRequest, _ name: String, _ format: RowsFormat) throws -> HTTPResponse {
        // The file's newest commit, read before anything else: a page read after it may be
        // given again, without reading the file, for as long as it stays the newest.
        let index = format == .json ? currentWALIndex() : nil
        let commit = index?.newestCommit()
        if let index, let commit, let answer = keptAnswer(request, name, index: index, commit: commit) { return answer }
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
            case "view":
                // Every kind's JSON row is one shape now; the view's columns are in `rows.csv`.
                throw Refusal(status: 400, message: "'view' is no longer a parameter: every row is {\"key\", \"seen_at\", \"stale\", \"record\"}, whatever the kind; rows.csv gives the view's columns")
            case "q":
                guard let value, !value.isEmpty else { throw Refusal(status: 400, message: "'q=' needs a search query, as 'cache search' takes it") }
                query = value
            case "as_of":
                switch Result(catching: { () throws(Moment.Unreadable) in try Moment.parse(value ?? "") }) {
                case .success(let moment):
                    page.asOf = moment
                case .failure(.expected(let expected)):
                    throw Refusal(status: 400, message: "Invalid value '\(value ?? "")' for 'as_of': expected \(expected).")
                case .failure(.future):
                    throw Refusal(status: 400, message: "'\(value ?? "")' for 'as_of' is in the future: the cache knows what was, not what will be.")
                }
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
        // The rows and their freshness from one snapshot: a refresh landing between two reads would
        // make the headers say one thing and the rows another. (A first search builds its index
        // as it reads, which a snapshot taken before would not see.)
        return try withSnapshot(of: name, unless: query != nil) { database in
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
            freshness.replicaLag = ReplicaLag.of(database, readOnly: settings.readOnly)
            let refreshing = try refreshBehind(database, source, freshness: &freshness, pastMoment: page.asOf != nil)
            // The query as given, each part escaped: `?limit=5&limit=10` is not `?limit=10&limit=5`.
            let canonical = Self.url(path: request.path, arguments)
            // JSON rows are one shape (`RowRecordBytes`); CSV gives the view's columns (nested
            // `__` ones too).
            let asRecords = format != .csv
            let key = reader.pageKey(of: source)
            switch format {
            case .json:
                // A page asked for again before anything it says changed is the page kept; a
                // follower's (its lag is in the body), a past moment's, a search's, and one whose
                // rows are picked by the clock (`stale=1`, a filter on `stale` or `age_s`: rows
                // join it as they cross their TTL) are made each time.
                let byTheClock = page.staleOnly || page.filters.contains { ["stale", "age_s"].contains($0.column) }
                let memoKey = query == nil && page.asOf == nil && freshness.replicaLag.json == nil && !byTheClock
                    ? database.path + "\u{0}" + canonical : nil
                let inputs = PageMemo.Inputs(freshness.version, refreshing: refreshing)
                let made: PageMemo.Page
                if let memoKey, let kept = pages.page(memoKey, inputs) {
                    made = kept
                } else {
                    made = try jsonPage(request, arguments, database, source, page, query: query, freshness: freshness, refreshing: refreshing)
                    if let memoKey { pages.keep(made, under: memoKey, inputs) }
                }
                // Kept for the hit path too, when what it says can only change by a commit or
                // the clock: not refreshing, fresh, and read after the commit noted first (by
                // the request's own target, whose query the canonical form came from).
                let etag = freshness.etag(query: canonical, staleRows: made.staleRows)
                if index?.identity != database.identity { noteWALIndex() }  // another file is at the path: for the next request
                if memoKey != nil, let commit, index?.identity == database.identity, !refreshing, !freshness.version.stale,
                   let confirmed = freshness.version.lastSuccessAt.flatMap(Timestamp.parse),
                   request.target.contains("?") || arguments.isEmpty {
                    pages.keep(PageMemo.Hit(page: made, commit: commit, file: database.identity, source: source.name, version: freshness.version,
                                            confirmed: confirmed, etag: etag),
                               under: request.target)
                }
                return jsonAnswer(request, made, freshness, etag: etag)
            case .csv, .ndjson:
                // Every row, page by page (each its own query, in key order): memory stays flat.
                // The filters and the cursor are checked first, so a mistake is a 400, not a
                // stream cut short.
                try reader.check(page, of: source)
                // No validator: the stream's stale flags are not counted before it is sent, and
                // rows a merge sync left out go stale one by one, which no version shows.
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
                    var writer: (csv: RowBytes, json: RowRecordBytes)?
                    var count = 0
                    let next = try self.withReader(of: name) { database in
                        try CacheReader(database).forEachRow(of: source, page: chunk, asRecords: asRecords) { columns, row in
                            let rowWriter = writer ?? (RowBytes.listRow(columns, asRecords: false), RowRecordBytes(columns, keyColumn: key))
                            writer = rowWriter
                            if format == .csv { rowWriter.csv.csv(row, into: &bytes) } else { rowWriter.json.json(row, into: &bytes); bytes.append(0x0A) }
                            count += 1
                        }
                    }
                    remaining = next == nil ? 0 : remaining - count
                    cursor = next
                    return bytes.isEmpty ? nil : bytes
                }
                let type = format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson"
                return HTTPResponse(status: 200, headers: [("Content-Type", type)] + freshness.headers, body: .stream(stream))
            }
        }
    }

    /// A kept page given without a reader, a transaction or a query (`PageMemo.Hit`): the
    /// file's newest commit is the one its page was read after, the path still names that file
    /// (one `stat`), no refresh of the source is in flight here, and by the clock the source and
    /// the page's rows are still fresh. Its headers are made for this answer, as the route's.
    private func keptAnswer(_ request: HTTPRequest, _ name: String, index: WALIndex, commit: WALIndex.Commit) -> HTTPResponse? {
        guard let (hit, version) = pages.hit(request.target, commit: commit, of: index.identity), hit.source == name, refresher.flight(name) == nil,
              FileIdentity.of(settings.databasePath) == index.identity else { return nil }
        pages.counted()
        return jsonAnswer(request, hit.page, Freshness(version: version), etag: hit.etag)
    }

    /// A JSON page's answer: its headers from `freshness` and its validator (which counts the
    /// page's stale rows: a row crossing its TTL changes it), a 304 when the client's copy says
    /// the same, else the page.
    private func jsonAnswer(_ request: HTTPRequest, _ made: PageMemo.Page, _ freshness: Freshness, etag: String) -> HTTPResponse {
        var headers = freshness.headers
        headers.insert(("ETag", etag), at: 0)
        if freshness.notModified(request, etag: etag, staleRows: made.staleRows) { return HTTPResponse(status: 304, headers: headers) }
        // (A next URL past 4 KiB stays in the body: headers share the request's memory.)
        if let nextURL = made.next, nextURL.utf8.count <= 4096 { headers.append(("Link", "<\(nextURL)>; rel=\"next\"")) }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")] + headers, body: .bytes(made.body))
    }

    /// A JSON page of rows, `{"source", "stale", "refreshing", "rows", "next"}`, made from the
    /// snapshot `database` reads.
    private func jsonPage(_ request: HTTPRequest, _ arguments: [(name: String, value: String?)], _ database: CacheDatabase, _ source: Source,
                          _ page: RowPage, query: String?, freshness: Freshness, refreshing: Bool) throws -> PageMemo.Page {
        let reader = CacheReader(database)
        let key = reader.pageKey(of: source)
        var bytes = Array("{\"source\": ".utf8)
        var text = ""
        JSONValue.quote(source.name, into: &text)
        // The first moment a fresh row of the page (or the header) turns stale (the views'
        // test: its seen_at older than the TTL), after which the page says something else.
        var freshUntil: Date?
        func fresh(since seenAt: String?) {
            guard let seenAt = seenAt.flatMap(Timestamp.parse) else { return }
            let crossing = seenAt.addingTimeInterval(Double(source.ttlSeconds))
            freshUntil = min(freshUntil ?? crossing, crossing)
        }
        if source.kind.hasHeader, case .account(let account?, _) = try reader.rows(of: source, limit: 0, asOf: page.asOf),
           let header = Self.header(.account(account, [])) {
            text += ", \"header\": "
            header.write(to: &text)
            if !account.stale { fresh(since: account.seenAt) }
        }
        if let lag = freshness.replicaLag.json {
            text += ", \"replica_lag_s\": "
            lag.write(to: &text)
        }
        bytes += Array(text.utf8) + Array(", \"stale\": \(freshness.version.stale), \"refreshing\": \(refreshing), \"rows\": [".utf8)
        var count = 0, staleRows = 0
        let write = { (columns: [String], row: Statement, writer: inout RowRecordBytes?) in
            let rowWriter = writer ?? RowRecordBytes(columns, keyColumn: key)
            writer = rowWriter
            if count > 0 { bytes += Array(",\n".utf8) } else { bytes += Array("\n".utf8) }
            rowWriter.json(row, into: &bytes)
            if let flag = rowWriter.staleColumn, row.int(flag) != 0 {
                staleRows += 1
            } else {
                fresh(since: rowWriter.seenAt(row))
            }
            count += 1
        }
        var writer: RowRecordBytes?
        var next: String?
        if let query {
            guard source.searchable else {
                throw Refusal(status: 400, message: "search is off for '\(source.name)'; 'cache sources set \(source.name) --search on' indexes its rows")
            }
            do {
                _ = try SearchIndex.buildForFirstSearch(source, path: database.path, readOnly: settings.readOnly, reading: database)
            } catch let error as CacheError {
                guard case .readOnly = error else { throw error }
                throw Refusal(status: 409, message: error.description)
            }
            for hit in try reader.search(source, query: query, limit: page.limit) where count < page.limit {
                try reader.forEachRow(of: source, document: hit.document, limit: page.limit - count, asRecords: true) { write($0, $1, &writer) }
            }
        } else {
            next = try reader.forEachRow(of: source, page: page, asRecords: true) { write($0, $1, &writer) }
        }
        let nextURL = next.map { Self.url(path: request.path, arguments.filter { $0.name != "after" } + [("after", $0)]) }
        bytes += Array("\(count > 0 ? "\n" : "")], \"next\": ".utf8)
        text = ""
        JSONValue.optional(nextURL).write(to: &text)
        bytes += Array((text + "}\n").utf8)
        return PageMemo.Page(body: bytes, staleRows: staleRows, next: nextURL, freshUntil: freshUntil)
    }

    /// What a kind shows above its rows: an account's holder and balance.
    static func header(_ rows: CachedRows) -> JSONValue? {
        guard case .account(let account?, _) = rows else { return nil }
        return .object([
            ("name", .string(account.name)), ("balance", .double(account.balance)), ("seen_at", .string(account.seenAt)),
            ("stale", .bool(account.stale)),
        ])
    }

    func row(_ request: HTTPRequest, _ name: String, key: String) throws -> HTTPResponse {
        try withSnapshot(of: name) { database in
            let reader = CacheReader(database)
            let source = try SourceStore(database).named(name)
            var freshness = Freshness(version: try reader.rowsVersion(of: source))
            _ = try refreshBehind(database, source, freshness: &freshness, pastMoment: false)
            var bytes: [UInt8] = []
            var staleRows = 0
            let pageKey = reader.pageKey(of: source)
            let page = RowPage(limit: 1, filters: [try RowFilter(column: pageKey, "eq." + key)])
            _ = try reader.forEachRow(of: source, page: page, asRecords: true) { columns, row in
                let writer = RowRecordBytes(columns, keyColumn: pageKey)
                writer.json(row, into: &bytes)
                if let flag = writer.staleColumn, row.int(flag) != 0 { staleRows += 1 }
            }
            guard !bytes.isEmpty else { throw CacheError.noSuchRow(key, source: name) }
            let etag = freshness.etag(query: "row\n" + key, staleRows: staleRows)
            let headers = [("ETag", etag)] + freshness.headers
            if freshness.notModified(request, etag: etag, staleRows: staleRows) { return HTTPResponse(status: 304, headers: headers) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")] + headers, body: .bytes(bytes + [0x0A]))
        }
    }

    func rowLog(_ name: String, key: String) throws -> HTTPResponse {
        try withReader(of: name) { database in
            let source = try SourceStore(database).named(name)
            return HTTPResponse.json(200, .array(try HistoryStore(database).log(of: source, key: key).map(\.json)))
        }
    }

    func changes(_ request: HTTPRequest, _ name: String) throws -> HTTPResponse {
        var selection = HistoryStore.Selection.latest
        for (parameter, value) in try arguments(request) {
            guard parameter == "since" else { throw Refusal(status: 400, message: "'\(parameter)' is not a parameter of changes: use since=RUN") }
            guard let value, let run = Int(value), run >= 0 else {
                throw Refusal(status: 400, message: "'since=\(value ?? "")' is not a run number (from 'cache history', or an event's id)")
            }
            selection = .afterRun(run)
        }
        return try withReader(of: name) { database in
            _ = try SourceStore(database).named(name)
            return HTTPResponse.json(200, .array(try HistoryStore(database).changes(source: name, selection).map(\.json)))
        }
    }

    /// `POST /sources/NAME/refresh`: one sync at most, however often it is asked for. It joins
    /// a sync in flight (this server's or another process's); while the source backs off after
    /// failures or the upstream's `Retry-After`, it is 503 with a `Retry-After` of its own; a
    /// run that ended within `--refresh-interval` is the answer, not a reason to fetch again.
    func refresh(_ request: HTTPRequest, _ name: String) throws -> HTTPResponse {
        guard !settings.readOnly else {
            _ = try withReader(of: name) { try SourceStore($0).named(name) }
            throw Refusal(status: 409, message: "this server is read-only (--read-only, CACHE_READ_ONLY or a Litestream replica): its primary refreshes")
        }
        let wait = try Self.preferredWait(request)
        let location: [(name: String, value: String)] = [("Location", "/sources/" + name.percentEncoded())]
        let waited: [(name: String, value: String)] = wait.map { [("Preference-Applied", "wait=\(Int($0))")] } ?? []
        // This server's refresh in flight is joined as the very flight seen: one that ends
        // between this look and a call to start must not make start begin another.
        enum Decision { case run, join(Refresher.Flight), joinElsewhere, backingOff(Int, String?), recent(SyncRunRecord) }
        let decision: Decision = try withReader(of: name) { database in
            let source = try SourceStore(database).named(name)
            if let flight = refresher.flight(name) { return .join(flight) }
            if try SyncLease(database).currentHolder(name) != nil { return .joinElsewhere }
            if let backoff = try CacheReader(database).backoff(source) {
                let seconds = Timestamp.parse(backoff.until).map { Int(max(1, $0.timeIntervalSinceNow.rounded(.up))) } ?? 60
                return .backingOff(seconds, backoff.lastError)
            }
            if let last = try HistoryStore(database).runs(source: name, limit: 1).first, last.outcome != "planned",
               let ended = Timestamp.parse(last.finishedAt), -ended.timeIntervalSinceNow < Double(settings.refreshInterval) {
                return .recent(last)
            }
            return .run
        }
        switch decision {
        case .backingOff(let seconds, let lastError):
            throw Refusal(status: 503, message: "'\(name)' is backing off after its upstream failed or asked to wait; it tries again in \(seconds) s"
                          + (lastError.map { " (last error: \($0))" } ?? ""), headers: [("Retry-After", String(seconds))])
        case .recent(let run):
            return HTTPResponse.json(200, .object([
                ("source", .string(name)), ("refreshing", .bool(false)), ("started", .bool(false)),
                ("run", .int(run.id)), ("outcome", .string(run.outcome)), ("finished_at", .string(run.finishedAt)),
                ("note", .string("its last sync ended less than \(settings.refreshInterval) s ago (--refresh-interval): that is the answer")),
            ]), headers: location)
        case .joinElsewhere:
            return HTTPResponse.json(202, .object([("source", .string(name)), ("refreshing", .bool(true)), ("started", .bool(false))]), headers: location)
        case .run, .join:
            let (flight, started) = if case .join(let flight) = decision { (flight, false) } else { refresher.start(name, onlyIfStale: false) }
            if let wait, let report = flight.wait(seconds: wait) {
                return HTTPResponse.json(200, report.json, headers: location + waited)
            }
            return HTTPResponse.json(202, .object([("source", .string(name)), ("refreshing", .bool(true)), ("started", .bool(started))]), headers: location)
        }
    }

    /// `Prefer: wait=N` (RFC 7240 §4.3): `wait=2`, `wait="2"`, and parameters after a `;`,
    /// which wait has none of; at most `longestWait`.
    static func preferredWait(_ request: HTTPRequest) throws -> Double? {
        var wait: Double?
        for prefer in request.headers(named: "Prefer") {
            for preference in prefer.split(separator: ",") {
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
                wait = min(seconds, longestWait)
            }
        }
        return wait
    }

    func healthz() throws -> HTTPResponse {
        let files = try withEveryReader { database in
            // No rows counted: load balancers ask every few seconds, whatever the cache's size.
            (statuses: try CacheReader(database).status(counting: .none), added: try SourceStore(database).addedAt(),
             lag: ReplicaLag.of(database, readOnly: settings.readOnly), path: database.path)
        }
        let statuses = files.flatMap(\.statuses)
        // Of several files, the one furthest behind is the server's lag.
        let lag = ReplicaLag.worst(files.map(\.lag))
        let verdicts = HealthVerdict.of(statuses, maxAge: settings.maxAge, ownBound: true,
                                         addedAt: files.reduce(into: [:]) { $0.merge($1.added) { first, _ in first } })
        // A follower past --max-lag (or with no heartbeat yet) is not healthy: a load balancer
        // drains it until it catches up. A primary is behind nothing.
        let lagOK = settings.maxLag.map(lag.isWithin) ?? true
        let ok = verdicts.allSatisfy(\.ok) && !(statuses.isEmpty && settings.maxAge != nil) && lagOK
        var fields: [(String, JSONValue)] = [("ok", .bool(ok)), ("sources", .array(verdicts.map(\.json)))]
        if let value = lag.json {
            fields.append(("replica_lag_s", value))
            if case .ahead(let seconds) = lag {
                fields.append(("replica_clock_ahead_s", .int(Int(seconds.rounded()))))
                fields.append(("error", .string(lag.skew!)))
            }
            if let maxLag = settings.maxLag { fields.append(("max_lag_s", .int(maxLag))) }
            if files.count > 1 {
                fields.append(("files", .array(files.map { .object([("database", .string($0.path)), ("replica_lag_s", $0.lag.json ?? .null)]) })))
            }
        }
        let body = JSONValue.object(fields)
        // A monitor asks again after a minute: a sync lands on cron's schedule, not sooner.
        return HTTPResponse.json(ok ? 200 : 503, body, headers: ok ? [("Cache-Control", "no-store")] : [("Cache-Control", "no-store"), ("Retry-After", "60")])
    }

    func eventStream(_ request: HTTPRequest) -> HTTPResponse {
        let lastEventID = request.header("Last-Event-ID")
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
        ], body: .stream(events.stream(lastEventID: lastEventID) { request.peerIsGone() }))
    }
}
