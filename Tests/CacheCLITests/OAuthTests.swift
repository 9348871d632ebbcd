import Foundation
import Testing

/// OAuth2 client credentials against the loopback upstream's token endpoint, whose /api/*
/// routes then want a live bearer token. Through the binary where "once per process" is the
/// point; in-process elsewhere.
@Suite(.gated) struct OAuthTests {
    /// A client of its own per test: tokens are kept per token URL and client id for the process.
    let clientID = "client-" + UUID().uuidString.prefix(8).lowercased()
    let secret = "s3cret-" + UUID().uuidString
    var environment: [String: String] { ["API_CLIENT_ID": clientID, "API_CLIENT_SECRET": secret] }

    func add(_ box: Sandbox, _ upstream: LoopbackUpstream, _ name: String, _ path: String, _ extra: [String] = []) {
        let added = box.cacheInProcess(["sources", "add", name, "--kind", "json", "--url", upstream.baseURL + path, "--key", "id",
                                        "--oauth-token-url", upstream.baseURL + "/oauth/token", "--client-id-env", "API_CLIENT_ID",
                                        "--client-secret-env", "API_CLIENT_SECRET"] + extra)
        #expect(added.status == 0, "\(added.stderr)")
    }

    func tokenRequests(_ upstream: LoopbackUpstream) throws -> Int { try upstream.stats()["token_requests"] as? Int ?? -1 }

    /// The bearer tokens the upstream was sent.
    func tokensSent(_ upstream: LoopbackUpstream) throws -> Set<String> {
        Set(try (upstream.stats()["requests"] as? [[String: Any]] ?? []).compactMap {
            ($0["authorization"] as? String).flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        })
    }

    @Test func oneTokenPerProcessForEveryPageOfEverySourceOfOneClient() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setOAuth(["client_id": clientID, "client_secret": secret, "expires_in": 3600])
        add(box, upstream, "items", "/api/items?per_page=100", ["--next", "link", "--scope", "items.read"])
        add(box, upstream, "customers", "/api/stripe?limit=100",
            ["--rows", "$.data", "--next", "last-key", "--next-param", "starting_after", "--has-more", "$.has_more", "--scope", "items.read"])
        let sync = try await box.cache(["sync", "--json"], environment: environment)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().allSatisfy { $0["inserted"] as? Int == 300 }, "\(sync.stdout)")
        #expect(try tokenRequests(upstream) == 1)  // six pages, two sources, one process
        let token = try #require(tokensSent(upstream).first)
        #expect(try tokensSent(upstream).count == 1 && token.hasPrefix("tok-"))
        // The token endpoint got the scope in the form, the client in HTTP Basic.
        let asked = try #require(try upstreamRequests(upstream, "/oauth/token").first)
        let basic = try #require((asked["authorization"] as? String)?.dropFirst("Basic ".count))
        #expect(String(decoding: try #require(Data(base64Encoded: String(basic))), as: UTF8.self) == "\(clientID):\(secret)")

        // Another process asks again.
        try upstream.setItems(count: 250)
        #expect(try await box.cache(["sync", "items"], environment: environment).status == 0)
        #expect(try tokenRequests(upstream) == 2)
        try expectNoSecretAnywhere(box, upstream)
    }

    /// The refresh-token grant (RFC 6749 §6), new for every source (issue 57: Airbyte's
    /// OAuthAuthenticator uses it): `--refresh-token-env` sends `grant_type=refresh_token` and
    /// the token, the client still in HTTP Basic; a refresh token the endpoint refuses ends the
    /// sync with the endpoint named, and nothing of the token is kept.
    @Test func aRefreshTokenIsExchangedForTheBearerToken() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let refreshToken = "rt-" + UUID().uuidString, revoked = "rt-" + UUID().uuidString
        try upstream.setOAuth(["client_id": clientID, "client_secret": secret, "refresh_token": refreshToken])
        add(box, upstream, "items", "/api/items?per_page=100", ["--next", "link", "--refresh-token-env", "API_REFRESH_TOKEN"])
        let sync = try await box.cache(["sync", "--json"], environment: environment.merging(["API_REFRESH_TOKEN": refreshToken]) { $1 })
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 300, "\(sync.stdout)")
        #expect(try tokenRequests(upstream) == 1)
        let asked = try #require(try upstreamRequests(upstream, "/oauth/token").first)
        #expect((asked["authorization"] as? String)?.hasPrefix("Basic ") == true)

        // A refresh token the endpoint refuses (400 invalid_grant): 77, the endpoint named.
        let refused = try await box.cache(["sync", "items"], environment: environment.merging(["API_REFRESH_TOKEN": revoked]) { $1 })
        #expect(refused.status == 77 && refused.stderr.contains("/oauth/token"), "\(refused.status) \(refused.stderr)")
        #expect(!refused.stderr.contains(revoked), "the refresh token was printed: \(refused.stderr)")
        let unset = try await box.cache(["sync", "items"], environment: environment)
        #expect(unset.status == 78 && unset.stderr.contains("API_REFRESH_TOKEN"), "\(unset.status) \(unset.stderr)")
        try expectNoSecretAnywhere(box, upstream, also: [refreshToken, revoked])
    }

    /// HTTP Basic from two variables (a `${VAR}` header cannot base64-encode): the pair is sent
    /// as RFC 7617 says, only the variables' names are stored, and a wrong password is a 401.
    @Test func basicAuthenticationFromTwoVariables() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setBasic(["user": "ada", "password": "pa:ss word"])
        let added = box.cacheInProcess(["sources", "add", "items", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100",
                                        "--key", "id", "--next", "link", "--basic-user-env", "API_USER", "--basic-password-env", "API_PASSWORD"])
        #expect(added.status == 0, "\(added.stderr)")
        let sync = try await box.cache(["sync", "items"], environment: ["API_USER": "ada", "API_PASSWORD": "pa:ss word"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try rows(box.database, "SELECT count(*) AS n FROM records").first?["n"] == "300")
        #expect(try upstreamRequests(upstream, "/api/items").allSatisfy { ($0["authorization"] as? String) == "Basic YWRhOnBhOnNzIHdvcmQ=" })
        let wrong = try await box.cache(["sync", "items"], environment: ["API_USER": "ada", "API_PASSWORD": "guess"])
        #expect(wrong.status == 77, "\(wrong.status) \(wrong.stderr)")
        let dump = try String(contentsOfFile: box.database, encoding: .isoLatin1)
        #expect(!dump.contains("pa:ss word") && dump.contains("API_PASSWORD"))
        let half = box.cacheInProcess(["sources", "add", "other", "--kind", "json", "--url", upstream.baseURL + "/api/items", "--key", "id",
                                       "--basic-password-env", "API_PASSWORD"])
        #expect(half.status == 64 && half.stderr.contains("needs '--basic-user-env <var>'"), "\(half.stderr)")

        // An API key as the user name and no password, as Stripe and Close take one.
        try upstream.setBasic(["user": "sk_test_1", "password": ""])
        let keyed = box.cacheInProcess(["sources", "add", "keyed", "--kind", "json", "--url", upstream.baseURL + "/api/items?per_page=100",
                                        "--key", "id", "--next", "link", "--basic-user-env", "API_KEY"])
        #expect(keyed.status == 0, "\(keyed.stderr)")
        #expect(try await box.cache(["sync", "keyed"], environment: ["API_KEY": "sk_test_1"]).status == 0)
        #expect(try upstreamRequests(upstream, "/api/items").last?["authorization"] as? String == "Basic c2tfdGVzdF8xOg==")
    }

    @Test func aTokenThatExpiresMidSyncIsRenewedOnce() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        // Each token serves two requests, then answers 401: the third page needs a new one.
        try upstream.setOAuth(["client_id": clientID, "client_secret": secret, "expire_after": 2])
        add(box, upstream, "items", "/api/items?per_page=100", ["--next", "link"])
        let sync = box.cacheInProcess(["sync", "items", "--json"], environment: environment)
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 300, "\(sync.stdout) \(sync.stderr)")
        #expect(try tokenRequests(upstream) == 2)
        #expect(try upstreamRequests(upstream, "/api/items").count == 4)  // three pages, one of them twice
        try expectNoSecretAnywhere(box, upstream)
    }

    @Test func aWrongSecretIsRefusedNamingTheTokenURLNeverTheSecret() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setOAuth(["client_id": clientID, "client_secret": "the-right-one"])
        add(box, upstream, "items", "/api/items?per_page=100", ["--next", "link"])
        let sync = box.cacheInProcess(["sync", "items"], environment: environment)
        #expect(sync.status == 77, "\(sync.stderr)")
        #expect(sync.stderr.contains("the token endpoint \(upstream.baseURL)/oauth/token refused to give a token (HTTP 401): check the client id, the secret and the scope"), "\(sync.stderr)")
        #expect(try upstreamRequests(upstream, "/api/items").isEmpty)
        // No variable: a configuration error naming it, and nothing asked.
        let missing = box.cacheInProcess(["sync", "items"], environment: ["API_CLIENT_ID": clientID])
        #expect(missing.status == 78 && missing.stderr.contains("the token variable API_CLIENT_SECRET is not set"), "\(missing.stderr)")
        #expect(try tokenRequests(upstream) == 1)
        try expectNoSecretAnywhere(box, upstream)
    }

    /// Neither the secret nor a token in the database's files or in any command's output.
    func expectNoSecretAnywhere(_ box: Sandbox, _ upstream: LoopbackUpstream, also more: [String] = []) throws {
        let secrets = [secret] + (try tokensSent(upstream)) + more
        var outputs = [String]()
        for command in [["status", "--json"], ["status"], ["history", "--json"], ["sources", "list", "--json"], ["metrics"],
                        ["list", "items", "--json", "--offline"], ["export", "items"], ["sql", "SELECT * FROM sync_runs"]] {
            let result = box.cacheInProcess(command, environment: environment)
            outputs.append(result.stdout + result.stderr)
        }
        for file in [box.database, box.database + "-wal"] where FileManager.default.fileExists(atPath: file) {
            outputs.append(String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self))
        }
        for secret in secrets {
            #expect(!outputs.contains { $0.contains(secret) }, "\(secret.prefix(4))… found")
        }
    }

    /// `--no-oauth` drops the client, so a source can move to `--token-env`.
    @Test func theClientCanBeDroppedForATokenVariable() throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        add(box, upstream, "items", "/api/items")
        let both = box.cacheInProcess(["sources", "set", "items", "--token-env", "T"])
        #expect(both.status == 64 && both.stderr.contains("both send the Authorization header"), "\(both.stderr)")
        #expect(box.cacheInProcess(["sources", "set", "items", "--no-oauth", "--token-env", "T"]).status == 0)
        let listed = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(listed["oauth_token_url"] is NSNull && listed["token_env"] as? String == "T", "\(listed)")
    }

    @Test(arguments: [
        (["--oauth-token-url", "http://127.0.0.1:9/token"], "OAuth2 needs '--oauth-token-url <url>', '--client-id-env <var>' and '--client-secret-env <var>' together."),
        (["--oauth-token-url", "http://127.0.0.1:9/token", "--client-id-env", "ID", "--client-secret-env", "SECRET", "--token-env", "T"],
         "'--token-env' and '--oauth-token-url' both send the Authorization header: give one."),
        (["--oauth-token-url", "file:///token", "--client-id-env", "ID", "--client-secret-env", "SECRET"],
         "Invalid value 'file:///token' for '--oauth-token-url': expected an http or https URL."),
        (["--oauth-token-url", "http://id:pw@127.0.0.1:9/token", "--client-id-env", "ID", "--client-secret-env", "SECRET"],
         "Invalid --oauth-token-url: credentials in the URL are not stored; pass a token with --token-env VAR or a --header."),
        (["--oauth-token-url", "http://127.0.0.1:9/token", "--client-id-env", "NOT-A-NAME", "--client-secret-env", "SECRET"],
         "Invalid value 'NOT-A-NAME' for '--client-id-env': expected an environment variable name."),
        // The client secret only over TLS, but to this machine.
        (["--oauth-token-url", "http://auth.example/token", "--client-id-env", "ID", "--client-secret-env", "SECRET"],
         "Invalid value 'http://auth.example/token' for '--oauth-token-url': expected an https URL: over http the client secret would cross the network in clear"),
        (["--oauth-token-url", "http://127.0.0.1.example.com/token", "--client-id-env", "ID", "--client-secret-env", "SECRET"],
         "Invalid value 'http://127.0.0.1.example.com/token' for '--oauth-token-url': expected an https URL"),
    ] as [([String], String)])
    func incompleteOptionsAreRefused(_ options: [String], _ message: String) throws {
        let box = try Sandbox()
        let add = box.cacheInProcess(["sources", "add", "x", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id"] + options)
        #expect(add.status == 64 && add.stderr.hasPrefix("cache: " + message.prefix(1).lowercased() + message.dropFirst()), "\(add.stderr)")
        // `sources set` refuses the same, changing nothing.
        #expect(box.cacheInProcess(["sources", "add", "y", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id"]).status == 0)
        if options.contains("http://auth.example/token") {
            let set = box.cacheInProcess(["sources", "set", "y"] + options)
            #expect(set.status == 64 && set.stderr.contains("expected an https URL"), "\(set.stderr)")
            #expect(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first?["oauth_token_url"] is NSNull)
        }
    }

    /// The README's OAuth2 recipe, run as written but for the URLs' hosts and paths.
    @Test func theReadmesRecipeRunsAsWritten() async throws {
        let readme = Docs.manual
        let start = try #require(readme.range(of: "cache sources add assets "))
        var words = PagingStylesTests.shellWords("sources add assets " + readme[start.upperBound...].prefix { $0 != "`" })
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try upstream.setOAuth(["client_id": clientID, "client_secret": secret])
        let url = try #require(words.firstIndex(of: "--url")) + 1
        #expect(words[url].hasPrefix("https://api.example.com/assets?"))
        words[url] = upstream.baseURL + "/api/items?" + (URLComponents(string: words[url])?.query ?? "")
        let token = try #require(words.firstIndex(of: "--oauth-token-url")) + 1
        #expect(words[token] == "https://login.example.com/oauth/token")
        words[token] = upstream.baseURL + "/oauth/token"
        #expect(box.cacheInProcess(words).status == 0, "\(words)")
        let sync = box.cacheInProcess(["sync", "assets", "--json"], environment: environment)
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 300, "\(sync.stdout) \(sync.stderr)")
    }
}
