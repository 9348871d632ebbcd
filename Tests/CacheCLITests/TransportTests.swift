import Foundation
import OfflineCache
import OfflineCacheURLSession
import Testing

/// The transports behind the `Fetching` seam, held to the same promises in the same run over
/// real HTTP on loopback: libcurl's (`Fetcher`, what the `cache` program uses) and URLSession's
/// (`URLSessionFetcher`, for a platform where libcurl cannot be loaded). Issue 56: an Apple
/// platform gets a transport that was run.
@Suite(.gated) struct TransportTests {
    static let transports: [String] = ["libcurl", "URLSession"]

    static func fetcher(_ name: String) -> any Fetching {
        name == "libcurl" ? Fetcher() : URLSessionFetcher()
    }

    static func request(_ url: String, timeout: Double = 10, maxBytes: Int = FetchRequest.defaultMaxBytes, headers: [Source.Header] = []) -> FetchRequest {
        FetchRequest(url: URL(string: url)!, headers: headers, timeout: timeout, maxBytes: maxBytes)
    }

    /// A body and its validators; sent back (RFC 9110 §13.1.2, §13.1.3), a 304 handed to the
    /// engine as it is, never answered from a cache of the transport's own.
    @Test(arguments: transports) func aBodyThenA304ForItsValidators(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        try upstream.control(["validators": true])
        let fetcher = Self.fetcher(transport)
        let first = try fetcher.fetch(Self.request(upstream.baseURL + "/account"))
        #expect(first.status == 200 && first.etag != nil && first.lastModified != nil, "\(first.status)")
        let account = try JSONSerialization.jsonObject(with: first.body) as? [String: Any]
        #expect(account?["status"] as? Int == 200)
        var again = Self.request(upstream.baseURL + "/account")
        again.etag = first.etag
        let unchanged = try fetcher.fetch(again)
        #expect(unchanged.notModified && unchanged.body.isEmpty, "\(unchanged.status)")
        var since = Self.request(upstream.baseURL + "/account")
        since.lastModified = first.lastModified
        _ = try fetcher.fetch(since)  // (this upstream answers 304 to If-None-Match alone)
        let sent = try #require((try upstream.stats()["requests"] as? [[String: Any]])?.filter { $0["path"] as? String == "/account" })
        #expect(sent.count == 3 && sent[1]["if_none_match"] as? String == first.etag && sent[2]["if_modified_since"] as? String == first.lastModified,
                "every fetch reached the upstream, with its validator: \(sent)")
    }

    /// The cap is on the body's bytes as they come: past it, the fetch fails as too large.
    @Test(arguments: transports) func aBodyPastTheCapIsRefused(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        #expect(throws: UpstreamError.tooLarge(limit: 100_000)) {
            try Self.fetcher(transport).fetch(Self.request(upstream.baseURL + "/big?bytes=5000000", maxBytes: 100_000))
        }
    }

    /// An upstream that accepts and never answers costs the request's timeout, not more.
    @Test(arguments: transports) func aSilentUpstreamTimesOut(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        let started = ContinuousClock.now
        #expect(throws: UpstreamError.timedOut(url: upstream.baseURL + "/silent", seconds: 1)) {
            try Self.fetcher(transport).fetch(Self.request(upstream.baseURL + "/silent", timeout: 1))
        }
        #expect(ContinuousClock.now - started < .seconds(8))
    }

    /// An upstream that answers a byte a second is cut off at the fetch's deadline, not kept
    /// alive by each byte.
    @Test(arguments: transports) func aTricklingUpstreamEndsAtTheDeadline(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        try upstream.control(["fault": "drip"])
        let started = ContinuousClock.now
        #expect(throws: UpstreamError.timedOut(url: upstream.baseURL + "/account", seconds: 2)) {
            try Self.fetcher(transport).fetch(Self.request(upstream.baseURL + "/account", timeout: 2))
        }
        #expect(ContinuousClock.now - started < .seconds(6))
    }

    /// A redirect is followed, at most `maxRedirects` times; the source's headers (its token)
    /// go to its own origin alone, never to the one a redirect names.
    @Test(arguments: transports) func redirectsKeepCredentialsOnTheOrigin(_ transport: String) throws {
        let upstream = try LoopbackUpstream(), elsewhere = try LoopbackUpstream()
        let fetcher = Self.fetcher(transport)
        let token = [Source.Header(name: "Authorization", value: "Bearer secret")]
        let here = try fetcher.fetch(Self.request(upstream.baseURL + "/redirect?to=" + upstream.baseURL + "/jokes/ten", headers: token))
        let away = try fetcher.fetch(Self.request(upstream.baseURL + "/redirect?to=" + elsewhere.baseURL + "/jokes/ten", headers: token))
        #expect(here.status == 200 && away.status == 200)
        func authorizations(_ server: LoopbackUpstream) throws -> [String?] {
            (try server.stats()["requests"] as? [[String: Any]] ?? []).filter { $0["path"] as? String == "/jokes/ten" }.map { $0["authorization"] as? String }
        }
        #expect(try authorizations(upstream) == ["Bearer secret"], "the same origin keeps the token")
        #expect(try authorizations(elsewhere) == [nil], "another origin gets none")
        #expect(throws: UpstreamError.tooManyRedirects(url: upstream.baseURL + "/loop")) {
            try fetcher.fetch(Self.request(upstream.baseURL + "/loop"))
        }
    }

    /// A failing status is an error that says which; a refused connection, unreachable.
    @Test(arguments: transports) func failuresSayWhat(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        try upstream.control(["status": 503, "retry_after": "7"])
        #expect(throws: UpstreamError.httpStatus(503, url: upstream.baseURL + "/jokes/ten", retryAfter: 7)) {
            try Self.fetcher(transport).fetch(Self.request(upstream.baseURL + "/jokes/ten"))
        }
        let refused = #expect(throws: UpstreamError.self) { try Self.fetcher(transport).fetch(Self.request("http://127.0.0.1:9/x")) }
        if case .unreachable? = refused {} else { Issue.record("\(String(describing: refused))") }
    }

    /// A local edit pushed through each transport: the write, its answer's ETag, applied once.
    @Test(arguments: transports) func aPushGoesThroughEitherTransport(_ transport: String) throws {
        let upstream = try LoopbackUpstream()
        try upstream.tasks(["tasks": [["id": 1, "title": "one", "done": false]]])
        let box = try Sandbox()
        let cache = try Cache(path: box.database, fetcher: Self.fetcher(transport))
        try cache.addSource(name: "tasks", kind: .json, url: upstream.baseURL + "/api/tasks",
                            [.key: "id", .writeURL: .text(upstream.baseURL + "/api/tasks/{key}")])
        #expect(try cache.sync("tasks").failure == nil)
        _ = try cache.edit("tasks", key: "1", .patch(#"{"done": true}"#))
        let sent = try cache.push("tasks")
        #expect(sent.map(\.state) == [.applied] && sent.first?.answerStatus == 200, "\(sent)")
        let writes = try upstream.taskLog()["writes"] as? [[String: Any]] ?? []
        #expect(writes.count == 1 && writes.first?["if_match"] is String && (writes.first?["idempotency_key"] as? String)?.hasPrefix("\"") == true, "\(writes)")
    }
}
