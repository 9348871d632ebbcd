import FoundationEssentials
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
            let milliseconds = (ContinuousClock.now - began).seconds * 1000
            let line = self.line(request, response, milliseconds: milliseconds, at: Timestamp.now())
            self.lock.withLock { _ in self.write(line) }
            return response
        }
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

    private struct Figures {
        var counts: [String: Int] = [:]
        var bucketCounts = Array(repeating: 0, count: RequestMetrics.buckets.count)
        var count = 0
        var sum = 0.0
    }

    private let figures = Mutex(Figures())


    func record(route: String?, method: String, status: Int, seconds: Double) {
        let key = Self.label("route", route ?? "none") + "," + Self.label("method", method) + "," + Self.label("status", String(status))
        figures.withLock { figures in
            figures.counts[key, default: 0] += 1
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { figures.bucketCounts[index] += 1 }
            figures.count += 1
            figures.sum += seconds
        }
    }

    /// The exposition's lines for the requests (after the sources' figures).
    package var exposition: String {
        let figures = figures.withLock { $0 }
        var out = "# HELP cache_http_requests_total HTTP requests answered, by route, method and status.\n# TYPE cache_http_requests_total counter\n"
        for (labels, count) in figures.counts.sorted(by: { $0.key < $1.key }) { out += "cache_http_requests_total{\(labels)} \(count)\n" }
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
