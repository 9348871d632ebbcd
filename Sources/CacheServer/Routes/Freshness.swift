import FoundationEssentials
import Glibc
import OfflineCache

/// The HTTP freshness of a source's rows, derived from the source and never a fixed number:
/// what a browser, an app or a shared cache (nginx, Varnish, a CDN) needs to keep a copy,
/// revalidate it and serve it stale while it does, read by RFC 9111's own arithmetic.
struct Freshness {
    let version: RowsVersion
    /// Whether this read started a refresh (RFC 9211's `fwd=stale`).
    var startedRefresh = false
    /// On a read-only follower, how far behind its primary it is.
    var replicaLag = ReplicaLag.primary

    /// The validator of an answer: the rows' version (`RowsVersion.tag`), when upstream last
    /// confirmed them, whether they are stale (and, for an answer that counted them, how many of
    /// its rows are), and the query that picked them. So it changes whenever the body would
    /// say something different that matters: new rows, a confirmation (new `seen_at`s, stale
    /// rows fresh again), rows crossing their TTL. It is weak (RFC 9110 §8.8.1): the body's
    /// `refreshing` (and a follower's `replica_lag_s`) says what was so when it was made, and only
    /// those may differ between two bodies it names.
    func etag(query: String, staleRows: Int? = nil) -> String {
        let parts = [version.tag, version.lastSuccessAt ?? "never", version.stale ? "stale" : "fresh",
                     staleRows.map(String.init) ?? "-", query]
        return "W/\"" + BodyHash.of(Data(parts.joined(separator: "\n").utf8)) + "\""
    }

    /// `Cache-Control: max-age=<TTL>` beside `Age: <seconds since upstream confirmed the rows>`:
    /// RFC 9111 §4.2.1 keeps a copy fresh while `max-age > current_age`, and §4.2.3 starts
    /// `current_age` from `Age`, so `max-age − Age` is exactly the TTL left, for a browser, a
    /// shared cache or a CDN alike. Then a copy may be served stale for one more TTL while one
    /// request revalidates (RFC 5861; what the cache itself does: stale rows at once, a refresh
    /// behind them), and for a day while upstream fails (the cache keeps serving its rows through
    /// an outage; a day bounds how long a copy downstream hides one). Rows never confirmed are
    /// stale from the start: `max-age=0`.
    var cacheControl: String {
        let maxAge = version.ageSeconds == nil ? 0 : version.ttlSeconds
        return "max-age=\(maxAge), stale-while-revalidate=\(version.ttlSeconds), stale-if-error=\(Self.staleIfError)"
    }

    static let staleIfError = 86_400

    /// RFC 9211: served from this cache; `ttl` the seconds of freshness left (`max-age − Age`),
    /// negative once stale; `fwd=stale` when this read started a refresh.
    var cacheStatus: String {
        let ttl = version.ageSeconds.map { version.ttlSeconds - $0 } ?? 0
        var lag = ""
        switch replicaLag {
        case .primary: break
        case .unknown: lag = "; detail=lag-unknown"
        case .behind(let seconds): lag = "; detail=lag-\(Int(seconds))s"
        case .ahead(let seconds): lag = "; detail=clock-ahead-\(Int(seconds))s"
        }
        return "cache; hit" + (startedRefresh ? "; fwd=stale" : "") + "; ttl=\(ttl)" + lag
    }

    /// When the answer last changed: the later of a run changing the rows and upstream
    /// confirming them (which moves every `seen_at`).
    var lastModified: Date? {
        [version.changedAt, version.lastSuccessAt].compactMap { $0.flatMap(Timestamp.parse) }.max()
    }

    var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [("Cache-Control", cacheControl), ("Cache-Status", cacheStatus)]
        if let age = version.ageSeconds { headers.append(("Age", String(max(0, age)))) }
        if let lastModified { headers.append(("Last-Modified", Self.httpDate(lastModified))) }
        return headers
    }

    /// Whether a client's copy is still what this answer would say (RFC 9110 §13.1.1–13.1.3):
    /// `If-None-Match` naming `etag` (weakly, or `*`); without it, `If-Modified-Since` no
    /// earlier than `Last-Modified` while the source and every row of the answer are fresh
    /// (`staleRows` 0: a copy made since the last confirmation had the same flags, as a row goes
    /// stale by the clock and fresh again only by a confirmation, which moves `Last-Modified`).
    /// An answer that did not count its stale rows (a stream) answers no `If-Modified-Since`.
    func notModified(_ request: HTTPRequest, etag: String, staleRows: Int?) -> Bool {
        if let ifNoneMatch = request.header("If-None-Match") { return Self.matches(ifNoneMatch, etag) }
        guard staleRows == 0, !version.stale, let lastModified,
              let since = request.header("If-Modified-Since").flatMap(Self.parseHTTPDate) else { return false }
        return since >= lastModified.timeIntervalSince1970.rounded(.down)
    }

    /// A weak validator of a JSON body (RFC 9110 §8.8.1): its hash without what ticks with the
    /// clock (`age_s`, `last_success_age_s`), which a client works out from the times beside them.
    static func weakTag(of body: JSONValue) -> String {
        func steady(_ value: JSONValue) -> JSONValue {
            switch value {
            case .array(let items): .array(items.map(steady))
            case .object(let fields): .object(fields.filter { !ticking.contains($0.0) }.map { ($0.0, steady($0.1)) })
            default: value
            }
        }
        var text = ""
        steady(body).write(to: &text)
        return "W/\"" + BodyHash.of(Data(text.utf8)) + "\""
    }

    static let ticking: Set<String> = ["age_s", "last_success_age_s"]

    /// Whether `If-None-Match` names `etag` by the weak comparison (RFC 9110 §8.8.3.2), or is `*`.
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        func opaque<S: StringProtocol>(_ tag: S) -> Substring { tag.hasPrefix("W/") ? Substring(tag.dropFirst(2)) : Substring(tag) }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingSpaces()
            return tag == "*" || opaque(tag) == opaque(etag)
        }
    }

    /// IMF-fixdate (RFC 9110 §5.6.7): `Tue, 01 Dec 2026 11:17:19 GMT`.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// An IMF-fixdate as Unix seconds (the parser `Retry-After` uses); nil for anything else,
    /// the obsolete forms included: a date not understood is ignored (RFC 9110 §13.1.3).
    static func parseHTTPDate(_ text: String) -> Double? {
        RetryAfter.httpDate(text)?.timeIntervalSince1970
    }
}
