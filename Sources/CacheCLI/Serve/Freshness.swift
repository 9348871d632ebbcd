import FoundationEssentials
import Glibc
import OfflineCache

/// The HTTP freshness of a source's rows, derived from the source and never a fixed number:
/// what a browser, an app or a shared cache (nginx, Varnish) needs to keep a copy, revalidate it
/// and serve it stale while it does.
struct Freshness {
    let version: RowsVersion
    /// Whether this read started a refresh (RFC 9211's `fwd=stale`).
    var startedRefresh = false
    /// On a read-only follower, how far behind its primary it is.
    var replicaLag = ReplicaLag.primary

    /// A strong validator of the rows: their version (`RowsVersion.tag`) and the query that
    /// picked them. A refresh that changes nothing keeps it, so a revalidation is answered 304;
    /// the freshness a cached copy's body shows (its `stale` flags and ages, as of when it was
    /// made) is told afresh by the headers of each answer.
    func etag(query: String) -> String {
        "\"" + BodyHash.of(Data((version.tag + "\n" + query).utf8)) + "\""
    }

    /// `Cache-Control`: fresh for what is left of the TTL; then served stale for up to one more
    /// TTL while one request revalidates (the cache's own rule: stale rows at once, a refresh
    /// behind them), and for up to a day when upstream fails (the cache keeps serving its rows
    /// through an outage; a day bounds how long a downstream copy hides one).
    var cacheControl: String {
        "max-age=\(version.freshFor), stale-while-revalidate=\(version.ttlSeconds), stale-if-error=\(Self.staleIfError)"
    }

    static let staleIfError = 86_400

    /// RFC 9211: served from this cache; `fwd=stale` when this read started a refresh.
    var cacheStatus: String {
        let ttl = version.stale ? -(max(0, (version.ageSeconds ?? version.ttlSeconds) - version.ttlSeconds)) : version.freshFor
        var lag = ""
        switch replicaLag {
        case .primary: break
        case .unknown: lag = "; detail=lag-unknown"
        case .behind(let seconds): lag = "; detail=lag-\(Int(seconds))s"
        }
        return "cache; hit" + (startedRefresh ? "; fwd=stale" : "") + "; ttl=\(ttl)" + lag
    }

    var headers: [(String, String)] {
        var headers: [(String, String)] = [("Cache-Control", cacheControl), ("Cache-Status", cacheStatus)]
        if let age = version.ageSeconds { headers.append(("Age", String(max(0, age)))) }
        if let changed = version.changedAt.flatMap(Timestamp.parse) { headers.append(("Last-Modified", Self.httpDate(changed))) }
        return headers
    }

    /// Whether `If-None-Match` names `etag` (or is `*`).
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingSpaces()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    /// IMF-fixdate (RFC 9110): `Tue, 01 Dec 2026 11:17:19 GMT`.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
