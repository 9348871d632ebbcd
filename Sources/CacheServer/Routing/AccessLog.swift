import FoundationEssentials
import Glibc
import OfflineCache
import Synchronization

/// `--access-log`: a line per request on standard error, as text or JSON (`--access-log-format`):
/// when it ended, who asked, what, the status, the body's bytes and how long it took. Text a
/// client sent is escaped, so a log line cannot be forged or drive a terminal.
/// The access log's two forms.
package enum AccessLogFormat: String, Sendable, CaseIterable {
    case text, json
}

final class AccessLog: Sendable {
    let format: AccessLogFormat
    let write: @Sendable (String) -> Void
    private let lock = Mutex(())

    init(format: AccessLogFormat, write: @escaping @Sendable (String) -> Void) {
        self.format = format
        self.write = write
    }

    var middleware: Middleware {
        Middleware(name: "access-log") { request, _, next in
            let began = ContinuousClock.now
            let response = next(request)
            self.log(request, response, milliseconds: (ContinuousClock.now - began).seconds * 1000)
            return response
        }
    }

    func log(_ request: HTTPRequest, _ response: HTTPResponse, milliseconds: Double) {
        let line = self.line(request, response, milliseconds: milliseconds, at: Timestamp.now())
        lock.withLock { _ in write(line) }
    }

    /// One request's line (a streamed body's bytes are counted as `-`: they are still to come).
    func line(_ request: HTTPRequest, _ response: HTTPResponse, milliseconds: Double, at time: String) -> String {
        let bytes: Int? = if case .bytes(let body) = response.body { body.count } else { nil }
        switch format {
        case .text:
            let query = request.rawQuery.isEmpty ? "" : "?" + request.rawQuery
            return "\(time) \(request.peer) \(TerminalSafe.escapeControl(request.method)) \(TerminalSafe.escapeControl(request.path + query)) "
                + "\(response.status) \(bytes.map(String.init) ?? "-") \(String(format2: milliseconds)) ms\n"
        case .json:
            return JSONValue.object([
                ("time", .string(time)), ("peer", .string(request.peer)), ("method", .string(request.method)),
                ("path", .string(request.path)), ("query", .string(request.rawQuery)), ("status", .int(response.status)),
                ("bytes", .optional(bytes)), ("duration_ms", .double((milliseconds * 10).rounded() / 10)),
            ]).compact + "\n"
        }
    }
}

/// What `/metrics` says of the requests themselves: a count by route, method and status, and a
/// histogram of their durations (Prometheus' default buckets), since the server started.
package final class RequestMetrics: Sendable {
    static let buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Key: Hashable {
        let route: String, method: String, status: Int
    }

    private struct Figures {
        var counts: [Key: Int] = [:]
        var bucketCounts = Array(repeating: 0, count: RequestMetrics.buckets.count)
        var count = 0
        var sum = 0.0
    }

    /// One set of figures per shard, each request adding to its thread's: 32 connections' threads
    /// queueing on one lock showed in `perf` (figures: docs/performance.md).
    private final class Shard: Sendable {
        let figures = Locked(Figures())
    }

    private let shards = (0..<8).map { _ in Shard() }

    func record(route: String?, method: String, status: Int, seconds: Double) {
        // Any token is a method to the library: the label takes the ones routes use, so a client
        // cannot grow the exposition with made-up ones.
        let known = Route.Method(rawValue: method) != nil || ["HEAD", "OPTIONS"].contains(method) ? method : "other"
        let key = Key(route: route ?? "none", method: known, status: status)
        // Threads' stacks lie a megabyte apart: the address's middle bits pick a shard.
        shards[Int((UInt(bitPattern: Int(bitPattern: pthread_self())) >> 12) % UInt(shards.count))].figures.withLock { figures in
            figures.counts[key, default: 0] += 1
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { figures.bucketCounts[index] += 1 }
            figures.count += 1
            figures.sum += seconds
        }
    }

    /// Every shard's figures, added up.
    private var figures: Figures {
        shards.reduce(into: Figures()) { total, shard in
            let figures = shard.figures.withLock { $0 }
            total.counts.merge(figures.counts, uniquingKeysWith: +)
            for index in total.bucketCounts.indices { total.bucketCounts[index] += figures.bucketCounts[index] }
            total.count += figures.count
            total.sum += figures.sum
        }
    }

    /// The exposition's lines for the requests (after the sources' figures).
    package var exposition: String {
        let figures = self.figures
        var out = "# HELP cache_http_requests_total HTTP requests answered, by route, method and status.\n# TYPE cache_http_requests_total counter\n"
        let labelled = figures.counts.map { key, count in
            (Self.label("route", key.route) + "," + Self.label("method", key.method) + "," + Self.label("status", String(key.status)), count)
        }
        for (labels, count) in labelled.sorted(by: { $0.0 < $1.0 }) { out += "cache_http_requests_total{\(labels)} \(count)\n" }
        out += "# HELP cache_http_request_duration_seconds How long requests took to answer (a stream's until its headers).\n"
        out += "# TYPE cache_http_request_duration_seconds histogram\n"
        for (index, bound) in Self.buckets.enumerated() {
            out += "cache_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(figures.bucketCounts[index])\n"
        }
        out += "cache_http_request_duration_seconds_bucket{le=\"+Inf\"} \(figures.count)\n"
        out += "cache_http_request_duration_seconds_sum \(figures.sum)\n"
        out += "cache_http_request_duration_seconds_count \(figures.count)\n"
        return out
    }

    private static func label(_ name: String, _ value: String) -> String {
        let escaped = value.replacingScalars { $0 == "\\" ? "\\\\" : $0 == "\"" ? "\\\"" : $0 == "\n" ? "\\n" : nil }
        return "\(name)=\"\(escaped)\""
    }
}
