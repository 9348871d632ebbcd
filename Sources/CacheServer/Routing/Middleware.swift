import FoundationEssentials
import OfflineCache

/// One step every request passes before its route: it answers itself (a refusal), or passes the
/// request on and may change the answer that comes back. The chain is a list of these values,
/// in order, built once from the settings (`chain(for:)`).
struct Middleware: Sendable {
    typealias Next = (HTTPRequest) -> HTTPResponse
    let name: String
    let handle: @Sendable (HTTPRequest, Route?, Next) -> HTTPResponse

    static func run(_ chain: ArraySlice<Middleware>, _ request: HTTPRequest, _ route: Route?, end: Next) -> HTTPResponse {
        guard let first = chain.first else { return end(request) }
        return first.handle(request, route) { run(chain.dropFirst(), $0, route, end: end) }
    }

    /// The server's chain: what is measured and logged first (every answer counts), then what
    /// decides whether the request is answered at all, outermost first.
    static func chain(for settings: CacheServer.Settings, metrics: RequestMetrics, accessLog: AccessLog?, sessions: Sessions) -> [Middleware] {
        var chain = [measured(metrics), uncached]
        if let accessLog { chain.append(accessLog.middleware) }
        chain += [framing, hostCheck(HostNames(settings)), cors(settings.cors), crossSite(settings.cors)]
        if let token = settings.token { chain.append(bearer(token, sessions)) }
        return chain
    }

    /// Every answer counted by route, method and status, and timed (`/metrics`).
    static func measured(_ metrics: RequestMetrics) -> Middleware {
        Middleware(name: "metrics") { request, route, next in
            let began = ContinuousClock.now
            let response = next(request)
            metrics.record(route: route?.id, method: request.method, status: response.status, seconds: (ContinuousClock.now - began).seconds)
            return response
        }
    }

    /// An answer that says nothing of its freshness would let a cache guess one (RFC 9111
    /// §4.2.2, heuristic freshness): one without `Cache-Control` is revalidated every time, a
    /// refusal never stored.
    static let uncached = Middleware(name: "uncached") { request, _, next in
        var response = next(request)
        if response.header("Cache-Control") == nil {
            response.headers.append(("Cache-Control", response.status >= 400 ? "no-store" : "no-cache"))
        }
        return response
    }

    /// RFC 9112 §6.3, §11.2: a request that a proxy in front and this server could frame
    /// differently is refused, and its connection closed, before anything reads it: two
    /// `Content-Length`s that differ, `Content-Length` beside `Transfer-Encoding`, a transfer
    /// coding other than `chunked`; and a target holding a control byte (a NUL cuts it short
    /// for C, so `/rows/5<NUL>x` would be read as `/rows/5`).
    static let framing = Middleware(name: "framing") { request, _, next in
        if let problem = framingProblem(request) { return .error(400, problem, headers: [("Connection", "close")]) }
        return next(request)
    }

    static func framingProblem(_ request: HTTPRequest) -> String? {
        let lengths = request.headers(named: "Content-Length").flatMap { $0.split(separator: ",").map { $0.trimmingSpaces() } }
        let codings = request.headers(named: "Transfer-Encoding")
        if Set(lengths).count > 1 {
            return "the request has Content-Lengths that differ (RFC 9112 §6.3); its body cannot be told from the next request"
        }
        if let length = lengths.first, !(length.allSatisfy { $0.isASCII && $0.isNumber } && !length.isEmpty) {
            return "the request's Content-Length is not a number (RFC 9112 §6.3)"
        }
        if !codings.isEmpty && !lengths.isEmpty {
            return "the request has both Content-Length and Transfer-Encoding (RFC 9112 §6.3); it is refused rather than read one way"
        }
        let coding = codings.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces().lowercased() } }
        if !coding.isEmpty && coding != ["chunked"] {
            return "the transfer coding '\(codings.joined(separator: ", "))' is not one this server reads: only chunked (RFC 9112 §6.1)"
        }
        if request.target.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            return "the request's target holds a control character or a space (RFC 9112 §3.2)"
        }
        return nil
    }

    /// DNS rebinding: a page whose name is made to resolve to this machine reaches the server
    /// with its own name in `Host`. Only the names the server serves are answered (RFC 9110
    /// §7.4: 421), judged by the name alone, whatever the port; no `Host` at all is 400
    /// (RFC 9112 §3.2).
    static func hostCheck(_ names: HostNames) -> Middleware {
        Middleware(name: "host") { request, _, next in
            let hosts = request.headers(named: "Host")
            guard hosts.count == 1, let host = hosts.first, !host.isEmpty else {
                return .error(400, hosts.isEmpty ? "the request has no Host header (RFC 9112 §3.2)" : "the request has \(hosts.count) Host headers (RFC 9112 §3.2)",
                              headers: [("Connection", "close")])
            }
            guard names.serves(host) else {
                return .error(421, "this server does not answer for the host '\(TerminalSafe.escapeControl(host))'; it answers for \(names.described) (--host-name adds one)")
            }
            return next(request)
        }
    }

    /// A page's origin, from `Origin`, as `scheme://host[:port]` in lower case; nil when the
    /// request carries none (or `null`).
    static func origin(of request: HTTPRequest) -> String? {
        guard let origin = request.header("Origin")?.trimmingSpaces(), !origin.isEmpty, origin != "null" else { return nil }
        return Self.normalized(origin: String(origin))
    }

    static func normalized(origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Whether `origin` is the server's own, as the browser addressed it (`Host`).
    static func isSameOrigin(_ origin: String, _ request: HTTPRequest) -> Bool {
        guard let host = request.header("Host")?.lowercased() else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// CORS: a page of an allowed origin may read the answers (`*`: any page, for reads);
    /// a preflight is answered for an allowed origin alone.
    static func cors(_ allowed: [String]) -> Middleware {
        let origins = Set(allowed.map { normalized(origin: $0) })
        return Middleware(name: "cors") { request, route, next in
            guard !origins.isEmpty else { return next(request) }
            let origin = Self.origin(of: request)
            let named = origin.map { origins.contains($0) } ?? false
            if request.method == "OPTIONS" {
                // A preflight: only an origin named may send what needs one (a token, a change).
                guard named else { return HTTPResponse(status: 204, headers: [("Vary", "Origin")]) }
                return HTTPResponse(status: 204, headers: [
                    ("Access-Control-Allow-Origin", origin!), ("Vary", "Origin"), ("Access-Control-Allow-Credentials", "true"),
                    ("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE"),
                    ("Access-Control-Allow-Headers", "Authorization, If-None-Match, If-Match, Idempotency-Key, Prefer, Last-Event-ID, Content-Type"),
                    ("Access-Control-Max-Age", "600"),
                ])
            }
            var response = next(request)
            let answered = named ? origin : origins.contains("*") && route?.changes != true ? "*" : nil
            response.headers.append(("Vary", "Origin"))
            if let answered {
                response.headers += [("Access-Control-Allow-Origin", answered),
                                     ("Access-Control-Expose-Headers", "Link, ETag, Cache-Status, Age, Last-Modified, Location, Retry-After")]
                // A named origin's page may send the session cookie (EventSource withCredentials).
                if named { response.headers.append(("Access-Control-Allow-Credentials", "true")) }
            }
            return response
        }
    }

    /// A request that changes anything, from a page of another origin, is refused unless that
    /// origin was allowed with `--cors` by name: a browser sends a CORS-simple POST without
    /// asking, and blocks only the answer. A request with neither `Origin` nor `Sec-Fetch-Site`
    /// (curl, cron, another program) is not from a page.
    static func crossSite(_ allowed: [String]) -> Middleware {
        let origins = Set(allowed.map { normalized(origin: $0) }.filter { $0 != "*" })
        return Middleware(name: "cross-site") { request, route, next in
            guard route?.changes == true else { return next(request) }
            let origin = Self.origin(of: request)
            let site = request.header("Sec-Fetch-Site")?.lowercased()
            // Neither header (or a person's own navigation, `none`): not a page's request.
            if request.header("Origin") == nil, site == nil || site == "none" { return next(request) }
            if let origin, origins.contains(origin) { return next(request) }
            if let origin, isSameOrigin(origin, request), site == nil || site == "same-origin" { return next(request) }
            if request.header("Origin") == nil, site == "same-origin" { return next(request) }
            return .error(403, "a page of another origin (\(origin ?? "unknown")) may not change anything here; 'cache serve --cors ORIGIN' allows one by name")
        }
    }

    /// With `--token-env`, every request but the live page's carries `Authorization: Bearer
    /// <token>`, compared in constant time (no early exit a client could time), or the cookie of
    /// a session `POST /session` opened with it (what a browser's `EventSource` can send).
    static func bearer(_ token: String, _ sessions: Sessions) -> Middleware {
        Middleware(name: "token") { request, route, next in
            // No route: a 404 or 405, which say nothing a route table does not.
            guard let route, request.method != "OPTIONS", !route.open(request) else { return next(request) }
            if request.header("Authorization") == nil, route.path != "/session", sessions.admits(request) { return privately(next(request)) }
            let given = request.header("Authorization").map { Substring($0) }
            let prefix = "bearer "  // the scheme in any case (RFC 9110)
            guard let given, given.prefix(prefix.count).lowercased() == prefix else {
                return .error(401, "this server needs 'Authorization: Bearer <token>'", headers: [("WWW-Authenticate", "Bearer")])
            }
            let offered = Array(given.dropFirst(prefix.count).utf8), expected = Array(token.utf8)
            var difference = UInt8(offered.count == expected.count ? 0 : 1)
            for index in expected.indices { difference |= expected[index] ^ (index < offered.count ? offered[index] : 0) }
            guard difference == 0 else {
                return .error(401, "the bearer token is not this server's", headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
            }
            return privately(next(request))
        }
    }
}

/// An answer a token let through is for its client alone (RFC 9111 §5.2.2.7): a shared cache in
/// front must not hand it to a client without the token, whether the token came as a header or
/// as a session's cookie (which RFC 9111 §3.5 does not cover).
func privately(_ response: HTTPResponse) -> HTTPResponse {
    var response = response
    if let index = response.headers.firstIndex(where: { HTTPField.sameName($0.name, "Cache-Control") }),
       !response.headers[index].value.contains("no-store"), !response.headers[index].value.contains("private") {
        response.headers[index].value = "private, " + response.headers[index].value
    }
    return response
}

/// The host names a server answers: its listen address, `localhost` (and its `.localhost`
/// names, RFC 6761 §6.3), the loopback addresses when it listens on loopback, and names given
/// with `--host-name`. A server on 0.0.0.0 or :: answers any literal IP address too (whichever
/// of its addresses a client used), never an unknown name.
struct HostNames: Sendable {
    let names: Set<String>
    let anyAddress: Bool

    init(_ settings: CacheServer.Settings) {
        let listen = settings.listenAddress.lowercased()
        names = Set(["localhost", "127.0.0.1", "::1", listen] + settings.hostNames.map { $0.lowercased() })
        anyAddress = listen == "0.0.0.0" || listen == "::"
    }

    var described: String {
        names.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }

    /// Whether `host` (a `Host` header: a name or an address, with a port or not) is one of them.
    func serves(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return false }
            name = name[name.index(after: name.startIndex)..<close]
        } else if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...].allSatisfy(\.isNumber) else { return false }
            name = name[..<colon]
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        let text = String(name)
        if names.contains(text) || text.hasSuffix(".localhost") { return true }
        return anyAddress && Self.isAddressLiteral(text)
    }

    static func isAddressLiteral(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) && Int($0)! <= 255 }) { return true }
        return text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
