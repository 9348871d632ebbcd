import Foundation
import Testing
@testable import CacheServer
@testable import OfflineCache

/// `cache serve` without a socket: the server's whole answer (`CacheServer.respond`) to a
/// request made here, over a sandbox's cache synced from a canned upstream, whose answers the
/// server's own refreshes fetch too.
final class InProcessServer {
    let box: Sandbox
    let upstream: CannedUpstream
    let server: CacheServer
    /// The access log's lines, when it is on.
    let log = LockedLines()

    /// A jokes source `jokes` (the canned ten, `ttl`) and an account `bank`, synced.
    init(ttl: String = "1h", _ configure: (inout CacheServer.Settings) -> Void = { _ in }) throws {
        box = try Sandbox()
        upstream = CannedUpstream()
        #expect(box.cli("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", ttl, upstream: upstream).status == 0)
        #expect(box.cli("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", ttl, upstream: upstream).status == 0)
        #expect(box.cli("sync", upstream: upstream).status == 0)
        var settings = CacheServer.Settings(databasePaths: [box.database])
        settings.fetcher = upstream
        let log = log
        settings.log = { log.append($0) }
        configure(&settings)
        server = CacheServer(settings)
    }

    /// `method target` with these headers (a `Host` of the server's own unless given).
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], host: String? = "127.0.0.1:8765",
                 body: String? = nil) -> HTTPResponse {
        var request = Self.request(method, target, headers: headers, host: host)
        request.body = Array((body ?? "").utf8)
        return server.respond(to: request)
    }

    /// A json source `tasks` of two records, writable at the canned upstream's `/tasks/{key}`
    /// (and `/tasks` for new ones), synced.
    func addTasks(conflictCheck: String = "if-match") {
        upstream.answer("/tasks", json: [["id": 1, "title": "one", "done": false], ["id": 2, "title": "two", "done": false]])
        upstream.answer("/tasks/1", json: ["id": 1, "title": "one", "done": false])
        #expect(box.cli("sources", "add", "tasks", "--kind", "json", "--key", "id", "--url", upstream.baseURL + "/tasks",
                        "--write-url", upstream.baseURL + "/tasks/{key}", "--create-url", upstream.baseURL + "/tasks",
                        "--conflict-check", conflictCheck, upstream: upstream).status == 0)
        #expect(box.cli("sync", "tasks", upstream: upstream).status == 0)
    }

    /// `method target` with a JSON body.
    func send(_ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = []) -> HTTPResponse {
        request(method, target, headers: (body == nil ? [] : [("Content-Type", "application/json")]) + headers, body: body)
    }

    func get(_ target: String, headers: [(String, String)] = []) -> HTTPResponse {
        request("GET", target, headers: headers)
    }

    /// A streamed answer's whole text (the CSV and JSON Lines routes), read to its end.
    func streamed(_ target: String) throws -> String {
        let response = get(target)
        guard case .stream(let next) = response.body else { return response.text }
        var bytes: [UInt8] = []
        while let chunk = try next() { bytes += chunk }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func request(_ method: String, _ target: String, headers: [(String, String)] = [], host: String? = "127.0.0.1:8765") -> HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let query: [(name: String, value: String?)] = parts.count < 2 ? [] : parts[1].split(separator: "&").map { pair in
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(halves[0]).removingPercentEncoding ?? "", halves.count == 2 ? String(halves[1]).removingPercentEncoding : nil)
        }
        return HTTPRequest(method: method, path: path, target: target, query: query,
                           headers: (host.map { [("Host", $0)] } ?? []) + headers.map { (name: $0.0, value: $0.1) })
    }
}

/// Lines appended from any thread.
final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

extension HTTPResponse {
    var text: String { String(decoding: bytes, as: UTF8.self) }
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], "\(text)")
    }
    func jsonArray() throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [[String: Any]], "\(text)")
    }
}
