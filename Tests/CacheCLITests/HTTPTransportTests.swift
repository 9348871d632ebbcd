import Foundation
import OfflineCache
import Testing

/// http and https through libcurl, end to end: the built binary against real servers on
/// loopback (the project's upstream, over TLS with a throwaway CA where it says so).
@Suite(.gated) struct HTTPTransportTests {
    func cachedJokeIDs(_ box: Sandbox, _ name: String) throws -> Set<Int> {
        Set(try rows(box.database, "SELECT id FROM jokes WHERE source = '\(name)'").compactMap { Int($0["id"]!) })
    }

    @Test func httpsSyncsBothKindsWithTheSourcesCA() async throws {
        let upstream = try LoopbackUpstream(.tls)
        #expect(upstream.baseURL.hasPrefix("https://"))
        let box = try Sandbox()
        #expect(try await box.cache(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"] + upstream.trust).status == 0)
        #expect(try await box.cache(["sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten"] + upstream.trust).status == 0)
        let result = try await box.cache("sync")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cachedAccount(box) == servedAccount(upstream))
        let served = try #require(try upstream.stats()["served_jokes"] as? [[Int]])
        #expect(served.count == 1)
        #expect(try cachedJokeIDs(box, "jokes") == Set(served[0]))
        #expect(try await box.cache("sources", "list", "--json").jsonArray().first?["ca_cert"] as? String == TestCA.shared.caFile)
    }

    @Test func httpsWithoutTheCAFailsOnTheCertificate() async throws {
        let upstream = try LoopbackUpstream(.tls)
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        let result = try await box.cache("sync", "jokes")
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("cache: sync jokes: TLS failure with \(upstream.baseURL)/jokes/ten: "), "\(result.stderr)")
        #expect(result.stderr.contains("certificate"), "\(result.stderr)")
        // The handshake failed: no HTTP request reached the server.
        #expect(try upstream.stats()["total"] as? Int == 0)
        #expect(try cachedJokeIDs(box, "jokes").isEmpty)
    }

    /// A plain-http server behind an https URL: a failed handshake, not "no server".
    @Test func httpsToAPlainServerIsATLSFailure() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let url = upstream.baseURL.replacingOccurrences(of: "http://", with: "https://") + "/jokes/ten"
        try await box.cache("sources", "add", "secure", "--kind", "jokes", "--url", url)
        let result = try await box.cache("sync", "secure")
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("cache: sync secure: TLS failure with "), "\(result.stderr)")
        #expect(!result.stderr.contains("cannot reach"), "\(result.stderr)")
    }

    @Test(arguments: LoopbackUpstream.Transport.allCases)
    func secretsNeverFollowARedirectToAnotherOrigin(_ transport: LoopbackUpstream.Transport) async throws {
        let origin = try LoopbackUpstream(transport)
        let elsewhere = try LoopbackUpstream(transport)  // the same host, another port
        let box = try Sandbox()
        let canary = "canary-\(UUID().uuidString)"
        let secrets = ["--token-env", "BANK_TOKEN", "--header", "X-Client: cache-tests"]
        let away = origin.baseURL + "/redirect?to=" + elsewhere.baseURL + "/account"
        let home = origin.baseURL + "/redirect?to=/account"
        #expect(try await box.cache(["sources", "add", "away", "--kind", "account", "--url", away] + origin.trust + secrets).status == 0)
        #expect(try await box.cache(["sources", "add", "home", "--kind", "account", "--url", home] + origin.trust + secrets).status == 0)

        let result = try await box.cache(["sync", "away", "home"], environment: ["BANK_TOKEN": canary])
        #expect(result.status == 0, "\(result.stderr)")

        // The other origin got the request, and neither the token nor the custom header.
        let received = try #require(try upstreamRequests(elsewhere).first?["headers"] as? [String: String])
        #expect(received["authorization"] == nil && received["x-client"] == nil, "\(received)")
        // The source's own origin got both, on the redirect and on the same-origin target.
        for path in ["/redirect", "/account"] {
            for request in try upstreamRequests(origin, path) {
                let headers = try #require(request["headers"] as? [String: String])
                #expect(headers["authorization"] == "Bearer \(canary)" && headers["x-client"] == "cache-tests", "\(path): \(headers)")
            }
        }
        #expect(try upstreamRequests(origin, "/redirect").count == 2)
        #expect(try upstreamRequests(origin, "/account").count == 1)
        // (Read after the request checks: reading what is served is a request too.)
        #expect(try cachedAccount(box, "away") == servedAccount(elsewhere))
        #expect(try cachedAccount(box, "home") == servedAccount(origin))
    }

    @Test func interimAnswersBeforeTheRealOneAreSkipped() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/continue")
        let result = try await box.cache("sync", "jokes", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.jsonArray().first?["http_status"] as? Int == 200)
        #expect(try cachedJokeIDs(box, "jokes").count == 10)
        // The 103's ETag was the interim answer's, not the real one's.
        #expect(try rows(box.database, "SELECT etag FROM sync_state").first?["etag"] == "NULL")
    }

    @Test func aStatusLineWithoutAReasonPhraseIsRead() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/no-reason")
        let result = try await box.cache("sync", "jokes")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cachedJokeIDs(box, "jokes").count == 10)
    }

    /// A redirect is followed at the end of its head; its body, endless here, is not read.
    @Test func aRedirectsBodyIsNotWaitedFor() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/redirect-endless")
        let started = ContinuousClock.now
        let result = try await box.cache("sync", "bank", "--timeout", "20s")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try cachedAccount(box) == servedAccount(upstream))
    }

    /// An error answer's body is not the data: a 503 stays a retryable 503 (75) whatever its
    /// size against the source's cap.
    @Test func anErrorBodyNeverCountsAgainstTheCap() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--max-bytes", "5")
        try upstream.control(["status": 503])
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("HTTP 503 from \(upstream.baseURL)/account after 3 attempts"), "\(result.stderr)")
    }

    @Test func aTokenWithAControlCharacterIsAConfigurationError() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--token-env", "BANK_TOKEN")
        let result = try await box.cache(["sync", "bank"], environment: ["BANK_TOKEN": "secret\r"])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("the token variable BANK_TOKEN holds a control character"), "\(result.stderr)")
        #expect(!result.stderr.contains("secret"))
        #expect(try upstreamRequests(upstream).isEmpty)
    }

    @Test func aCAFileThatCannotBeReadIsAConfigurationError() async throws {
        let upstream = try LoopbackUpstream(.tls)
        let box = try Sandbox()
        let ca = box.folder + "/ca.pem"
        try FileManager.default.copyItem(atPath: TestCA.shared.caFile, toPath: ca)
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ca-cert", ca)
        #expect(try await box.cache("sync", "jokes").status == 0)
        try FileManager.default.removeItem(atPath: ca)
        let result = try await box.cache("sync", "jokes")
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("cannot use the CA file \(ca)"), "\(result.stderr)")
    }

    /// A server that accepts and then says nothing fails the attempt after the 10 s idle
    /// timeout, well inside the sync's 30 s; the retry then succeeds.
    @Test(.waiting) func aSilentAnswerFailsAtTheIdleTimeout() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try upstream.control(["silent_once": true])
        let result = try await box.cache("sync", "bank", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.jsonArray().first?["attempts"] as? Int == 2)
        let times = try upstreamRequests(upstream).map { $0["time"] as! Double }
        #expect(times.count == 2)
        // 10 s of silence, then the retry's backoff (under 2 s).
        #expect(times[1] - times[0] >= 9.9 && times[1] - times[0] < 14, "\(times)")
    }

    /// `--timeout` bounds the whole sync: an attempt that runs to it leaves no time for a retry.
    @Test func timeoutBoundsTheWholeSyncRetriesIncluded() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/silent")
        let result = try await box.cache("sync", "bank", "--timeout", "5s", "--json")
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("timed out after 5s waiting for \(upstream.baseURL)/silent"), "\(result.stderr)")
        let report = try #require(try result.jsonArray().first)
        #expect(report["attempts"] as? Int == 1, "\(report)")
        #expect(try upstreamRequests(upstream, "/silent").count == 1)
        // The sync's own clock, not the test's: on a loaded machine the process's start and the
        // test's turn to resume added 5 s once. Two attempts of 5 s each would take over 10 s.
        let milliseconds = try #require(report["duration_ms"] as? Int)
        #expect(milliseconds >= 4_900 && milliseconds < 9_000, "took \(milliseconds) ms")
    }

    @Test(arguments: LoopbackUpstream.Transport.allCases)
    func aGzipAnswerIsDecodedAndCached(_ transport: LoopbackUpstream.Transport) async throws {
        let upstream = try LoopbackUpstream(transport)
        let box = try Sandbox()
        #expect(try await box.cache(["sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account"] + upstream.trust).status == 0)
        try upstream.control(["gzip": true])
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cachedAccount(box) == servedAccount(upstream))
        let sent = try #require(try upstreamRequests(upstream).first?["headers"] as? [String: String])
        #expect(sent["accept-encoding"]?.contains("gzip") == true, "\(sent)")
    }

    /// Gzip that inflates to 200 MB (about 100 MB on the wire), against the default 64 MiB cap:
    /// refused as the decoded bytes pass the cap. The process holds the cap's worth of body and
    /// its own ~35 MiB (runtime, libcurl, OpenSSL), never the 200 MB, and under twice the cap.
    @Test func aGzipBodyInflatingPastTheCapIsRefused() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let cap = FetchRequest.defaultMaxBytes
        try await box.cache("sources", "add", "bomb", "--kind", "jokes", "--url", upstream.baseURL + "/gzip-bomb?bytes=200000000")
        let (result, peakKB) = try measuredPeak(box, ["sync", "bomb"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("cache: sync bomb: body larger than the \(cap)-byte cap"), "\(result.stderr)")
        #expect(peakKB > 0 && peakKB < (cap >> 10) + 48 * 1024 && peakKB < 2 * (cap >> 10), "peak \(peakKB) KB")
        print("gzip body inflating to 200 MB: refused at the 64 MiB cap, peak RSS \(peakKB / 1024) MiB")
        #expect(try cachedJokeIDs(box, "bomb").isEmpty)
    }

    @Test func proxiesComeFromTheEnvironment() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let proxy = try ForwardProxy(log: box.folder + "/proxy.log")
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")

        let proxied = try await box.cache(["sync", "bank"], environment: ["http_proxy": proxy.url])
        #expect(proxied.status == 0, "\(proxied.stderr)")
        let seen = proxy.relayed
        #expect(seen == upstream.baseURL + "/account\n", "the proxy saw: \(seen)")

        let bypassed = try await box.cache(["sync", "bank"], environment: ["http_proxy": proxy.url, "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        #expect(proxy.relayed == seen)
        #expect(try upstreamRequests(upstream).count == 2)
        #expect(try cachedAccount(box) == servedAccount(upstream))
    }

    /// Eight sources on an upstream that takes a second per answer: fetched four at a time.
    @Test func syncsFetchSeveralSourcesAtOnce() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let names = (1...8).map { "bank\($0)" }
        for name in names {
            try await box.cache("sources", "add", name, "--kind", "account", "--url", upstream.baseURL + "/account")
        }
        try upstream.control(["delay": 1])
        let started = ContinuousClock.now
        let result = try await box.cache("sync")
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 0, "\(result.stderr)")
        // One at a time would take over 8 s; the request times below show the batches of four.
        #expect(elapsed < .seconds(8), "8 one-second sources took \(elapsed)")
        // Four requests reached the upstream together, then four more.
        let times = try upstreamRequests(upstream).map { $0["time"] as! Double }.sorted()
        #expect(times.count == 8)
        #expect(times[3] - times[0] < 0.5 && times[7] - times[4] < 0.5 && times[4] - times[0] > 0.9, "\(times)")
        // Reported in the order the sources are listed, every one updated with the right rows.
        #expect(result.stdout.split(separator: "\n").map { String($0.split(separator: ":")[0]) } == names.sorted())
        let served = try servedAccount(upstream)
        for name in names { #expect(try cachedAccount(box, name) == served, "\(name)") }
        print("8 sources answering after 1 s each: synced in \(elapsed)")
    }

    @Test func aHugeResponseHeadIsRefused() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/huge-head")
        let (result, peakKB) = try measuredPeak(box, ["sync", "jokes"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("cache: sync jokes: bad data: a response head larger than 256 KiB"), "\(result.stderr)")
        #expect(peakKB > 0 && peakKB < 64 * 1024, "peak \(peakKB) KB")
    }

    @Test func headersWithControlCharactersAreRefusedAtAdd() async throws {
        let box = try Sandbox()
        for header in ["X: a\r\nInjected: yes", "X: a\nInjected: yes", "X: a\rb", "X: tab\there", "X: \u{85}next", "X: \u{7F}"] {
            let result = try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/account",
                                       "--header", header)
            #expect(result.status == 64 && result.stderr.contains("--header"), "\(header.debugDescription): \(result.stderr)")
        }
        #expect(try await box.cache("sources", "add", "bank", "--kind", "account", "--url", "http://127.0.0.1:9/account",
                              "--header", "X-Fine: caf\u{E9} ok").status == 0)
    }

    @Test func unusableURLsAreRefusedAtAdd() async throws {
        let box = try Sandbox()
        for (url, words) in [("http://127.0.0.1:99999/", "port 99999 is out of range"),
                             ("https://user:pw9f3x@127.0.0.1/", "credentials in the URL"),
                             ("http:///path", "no host")] {
            let result = try await box.cache("sources", "add", "x", "--kind", "jokes", "--url", url)
            #expect(result.status == 64, "\(url): \(result.stderr)")
            #expect(result.stderr.contains(words), "\(url): \(result.stderr)")
            #expect(!result.stderr.contains("pw9f3x"))
        }
    }

    /// Whether this machine has IPv6 loopback (some hosts disable IPv6).
    static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }()

    @Test(.enabled(if: hasIPv6Loopback))
    func anIPv6LiteralIsFetched() async throws {
        let upstream = try LoopbackUpstream(arguments: ["--bind", "::1"])
        let box = try Sandbox()
        let url = upstream.baseURL + "/account"
        #expect(url == "http://[::1]:\(upstream.port)/account")
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", url)
        let result = try await box.cache("sync", "bank")
        #expect(result.status == 0, "\(result.stderr)")
        let host = try #require(try upstreamRequests(upstream).first?["headers"] as? [String: String])["host"]
        #expect(host == "[::1]:\(upstream.port)")
    }
}
