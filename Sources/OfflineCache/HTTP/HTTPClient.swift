import CurlShim
import FoundationEssentials

/// `http://` and `https://` through libcurl.
///
/// libcurl brings TLS (always verified), HTTP/2, compression, proxies from the environment,
/// IPv6 and careful framing. This type keeps the project's promises on top of it:
/// - one deadline for the whole sync (`FetchRequest.deadline`, on the monotonic clock), a
///   connect timeout, and an idle timeout (nothing received for `idleTimeout` fails);
/// - the body cap on the *decoded* bytes, enforced as they arrive, and a cap on the header block;
/// - redirects followed here, not by libcurl: at most `maxRedirects`, to http or https only, and
///   the source's headers (its bearer token among them) go only to the source URL's origin.
package struct HTTPClient {
    let request: FetchRequest

    /// A response head larger than this is refused (real servers send a few KiB).
    static let maxHeaderBytes = 256 << 10
    /// A response that sends nothing for this long fails.
    package static let idleTimeout = 10

    func fetch() throws(UpstreamError) -> FetchResponse {
        if let failure = cache_curl_load() {
            throw .unreachable(url: request.display(request.url), reason: String(cString: failure))
        }
        return try Self.follow(request) { url, headers throws(UpstreamError) in
            try Transfer(request: request, url: url, headers: headers).perform()
        }
    }

    /// The request through one transport's `exchange` (one request and its answer, no redirect
    /// followed): redirects followed here, the answer made a response as the engine reads it.
    /// libcurl's transport and the URLSession one (`OfflineCacheURLSession`) share it, so both
    /// keep the same promises.
    package static func follow(_ request: FetchRequest,
                               _ exchange: (URL, [Source.Header]) throws(UpstreamError) -> TransportAnswer) throws(UpstreamError) -> FetchResponse {
        let origin = Origin(request.url)
        var url = request.url
        var redirects = 0
        if request.write != nil {
            // A write's answer, whatever it is, is the push's to judge; a redirect is not followed
            // (a record's URL that moved is the source's to change, not a write's to guess).
            let answer = try exchange(url, request.headers)
            var response = FetchResponse(status: answer.status, body: answer.body, etag: answer.headers["etag"],
                                         lastModified: answer.headers["last-modified"], link: answer.headers["link"])
            response.retryAfter = answer.headers["retry-after"].flatMap { RetryAfter.seconds($0) }
            response.location = answer.headers["location"]
            return response
        }
        while true {
            // A redirect elsewhere gets no credentials and none of the source's own headers.
            let headers = Origin(url) == origin ? request.headers : []
            let answer = try exchange(url, headers)
            guard answer.isRedirect, let location = answer.location else {
                var response = try Self.response(answer, url: url, display: request.display(url))
                response.cursor = request.cursorHeader.flatMap { answer.headers[$0.lowercased()] }
                return response
            }
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                throw .badData("a redirect to an unreadable Location")
            }
            let scheme = next.scheme?.lowercased() ?? "none"
            guard scheme == "http" || scheme == "https" else { throw .unsafeScheme(scheme) }
            redirects += 1
            guard redirects <= request.maxRedirects else { throw .tooManyRedirects(url: request.display(request.url)) }
            url = next
        }
    }

    /// A complete exchange as the sync engine sees it: 304, a failing status, or the body.
    static func response(_ answer: TransportAnswer, url: URL, display: String) throws(UpstreamError) -> FetchResponse {
        let etag = answer.headers["etag"], lastModified = answer.headers["last-modified"]
        if answer.status == 304 { return FetchResponse(status: 304, body: Data(), etag: etag, lastModified: lastModified) }
        guard (200..<300).contains(answer.status) else {
            let retryAfter = answer.headers["retry-after"].flatMap { RetryAfter.seconds($0) }
            // GitHub's style: 403 (or 429) with X-RateLimit-Remaining: 0 and the reset as epoch seconds.
            let reset = answer.headers["x-ratelimit-reset"].flatMap { RetryAfter.resetSeconds($0) }
            let exhausted = answer.headers["x-ratelimit-remaining"]?.trimmingSpaces() == "0"
            if (answer.status == 429 && reset != nil) || (answer.status == 403 && exhausted) {
                // The reset header, when sent, is the limit's own clock; Retry-After otherwise.
                throw .rateLimited(answer.status, url: display, resetIn: reset ?? retryAfter, byResetHeader: reset != nil)
            }
            throw .httpStatus(answer.status, url: display, retryAfter: retryAfter)
        }
        return FetchResponse(status: answer.status, body: answer.body, etag: etag, lastModified: lastModified,
                             link: answer.headers["link"])
    }
}

/// One request's answer as a transport gives it, no redirect followed.
package struct TransportAnswer {
    package var status: Int
    /// The headers the engine uses, names lowercased: etag, last-modified, retry-after, location.
    package var headers: [String: String]
    package var body: Data

    package init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static let redirects: Set<Int> = [301, 302, 303, 307, 308]
    var isRedirect: Bool { Self.redirects.contains(status) }
    var location: String? { headers["location"] }
}

/// Scheme, host and port: where a request's secrets may go.
struct Origin: Equatable {
    let scheme: String
    let host: String
    let port: Int

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}

/// One request and its response through a libcurl easy handle, which follows no redirect.
final class Transfer {
    typealias Answer = TransportAnswer

    private let request: FetchRequest
    private let url: URL
    private let headers: [Source.Header]
    private let display: String

    // Filled in by libcurl's callbacks, on the thread that runs `perform`.
    private var status = 0
    private var kept: [String: String] = [:]
    private var contentLength: Int?
    private var encoded = false
    private var headerBytes = 0
    private var body = Data()
    /// Why a callback stopped the transfer; libcurl then reports a write error.
    private var stopped: UpstreamError?
    /// The transfer stopped at the end of a redirect's head, on purpose.
    private var redirectHead = false
    /// The blank line ending the current response head has been read.
    private var headComplete = false

    private static let keptHeaders: Set<String> = ["etag", "last-modified", "retry-after", "location", "link",
                                                   "x-ratelimit-remaining", "x-ratelimit-reset"]

    init(request: FetchRequest, url: URL, headers: [Source.Header]) {
        self.request = request
        self.url = url
        self.headers = headers
        self.display = request.display(url)
    }

    func perform() throws(UpstreamError) -> Answer {
        let started = ContinuousClock.now
        let remainingMs = Int((request.deadline - started) / .milliseconds(1))
        guard remainingMs > 0 else { throw .timedOut(url: display, seconds: request.timeout) }

        // What libcurl keeps pointers to lives until after curl_easy_cleanup: the deferred
        // releases below run in reverse order, so the handle is cleaned up first.
        let errors = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errors.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errors.deallocate() }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { cache_curl_slist_free_all(list) }
        let handle: UnsafeMutableRawPointer
        if let reused = request.connection?.handle() {
            handle = reused
        } else {
            guard let made = cache_curl_easy_init() else {
                throw .unreachable(url: display, reason: "libcurl could not start a transfer")
            }
            handle = made
        }
        defer { if request.connection == nil { cache_curl_easy_cleanup(handle) } else { cache_curl_easy_reset(handle) } }

        // "Name;" sends a header with an empty value ("Name:" would tell libcurl to drop it).
        var lines = headers.map { $0.value.isEmpty ? "\($0.name);" : $0.line }
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) { lines.append("Accept: \(request.accept)") }
        if request.form != nil { lines.append("Content-Type: application/x-www-form-urlencoded") }
        if let write = request.write, write.body != nil {
            lines.append("Content-Type: application/json")
            // Sent at once: no `Expect: 100-continue` round trip for a larger body.
            lines.append("Expect:")
        }
        if let etag = request.etag { lines.append("If-None-Match: \(etag)") }
        if let lastModified = request.lastModified { lines.append("If-Modified-Since: \(lastModified)") }
        for line in lines {
            guard let longer = cache_curl_slist_append(list, line) else {
                throw .unreachable(url: display, reason: "out of memory building the request")
            }
            list = longer
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        var set = CURLE_OK
        func check(_ result: CURLcode) { if set == CURLE_OK { set = result } }
        check(cache_curl_setopt_string(handle, CURLOPT_URL, url.absoluteString))
        // Redirects are followed by HTTPClient (schemes checked there), never by libcurl.
        check(cache_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        check(cache_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        check(cache_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, remainingMs))
        check(cache_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS,
                                     min(remainingMs, Int(FetchRequest.connectTimeout * 1000))))
        // Idle: under 1 byte a second over 10 seconds fails the transfer.
        check(cache_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
        check(cache_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, HTTPClient.idleTimeout))
        // "" asks for every encoding this libcurl decodes (gzip, deflate, br, zstd).
        check(cache_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""))
        check(cache_curl_setopt_string(handle, CURLOPT_USERAGENT, "cache/\(CacheVersion.string)"))
        check(cache_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)))
        check(cache_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(cache_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let caCert = request.caCert { check(cache_curl_setopt_string(handle, CURLOPT_CAINFO, caCert)) }
        if let form = request.form {
            // Copied by libcurl, and a POST by that.
            check(cache_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, form.utf8.count))
            check(cache_curl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, form))
        }
        if let write = request.write {
            if let body = write.body {
                check(cache_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count))
                check(cache_curl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, String(decoding: body, as: UTF8.self)))
            }
            check(cache_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, write.method))
        }
        check(cache_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errors)))
        check(cache_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, Transfer.onHeader))
        check(cache_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
        check(cache_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, Transfer.onBody))
        check(cache_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        guard set == CURLE_OK else {
            throw .unreachable(url: display, reason: "libcurl refused a setting: \(String(cString: cache_curl_easy_strerror(set)))")
        }
        let code = cache_curl_easy_perform(handle)
        // A redirect's head is all this transfer needed: HTTPClient follows it.
        if redirectHead { return Answer(status: status, headers: kept, body: Data()) }
        if let stopped { throw stopped }
        guard code == CURLE_OK else {
            let detail = String(cString: errors).trimmingWhitespace()
            var osError = 0
            _ = cache_curl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError)
            // A timeout before the deadline is the connect or idle timeout, not --timeout.
            let elapsedMs = Int((ContinuousClock.now - started) / .milliseconds(1))
            let seconds = elapsedMs < remainingMs - 500 ? Double(HTTPClient.idleTimeout) : request.timeout
            throw failure(code, detail: detail.isEmpty ? String(cString: cache_curl_easy_strerror(code)) : detail,
                          osError: Int32(osError), timeoutSeconds: seconds)
        }
        var final = 0
        if cache_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &final) == CURLE_OK, final > 0 { status = final }
        return Answer(status: status, headers: kept, body: body)
    }

    /// " through the proxy P (from VAR)" when libcurl takes one from the environment for this
    /// URL: a proxy that cannot be reached is named, not the upstream blamed.
    private var throughProxy: String {
        ProxyChoice.forURL(url, environment: processEnvironment()).map { " through the proxy \($0.proxy) (from \($0.variable))" } ?? ""
    }

    /// libcurl's result as the error the rest of the project knows; by code, never by message.
    private func failure(_ code: CURLcode, detail: String, osError: Int32, timeoutSeconds: Double) -> UpstreamError {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: display, seconds: timeoutSeconds)
        case CURLE_COULDNT_RESOLVE_HOST:
            return .unreachable(url: display, reason: "host not found")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .unreachable(url: display + throughProxy, reason: "proxy host not found")
        case CURLE_COULDNT_CONNECT:
            let reason = osError != 0 ? SystemError(code: osError).description.lowercased() : detail
            return .unreachable(url: display + throughProxy, reason: reason)
        case CURLE_PARTIAL_FILE:
            return .truncated(url: display, received: body.count, expected: encoded ? -1 : contentLength ?? -1)
        case CURLE_RECV_ERROR where status != 0, CURLE_HTTP2 where status != 0, CURLE_HTTP2_STREAM where status != 0:
            // The connection or stream broke after the answer began (a reset mid-body): a partial body.
            return .truncated(url: display, received: body.count, expected: encoded ? -1 : contentLength ?? -1)
        case _ where [CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR, CURLE_SEND_ERROR].contains(code)
            && status == 0 && SystemError(code: osError).isConnectionLost:
            // The connection reset before any answer, in the TLS handshake or before it: the
            // network's trouble, so asked again like any other that broke (not a TLS failure).
            return .unreachable(url: display, reason: "the connection was reset before an answer (\(SystemError(code: osError).description.lowercased()))")
        case CURLE_SSL_CACERT_BADFILE:
            return .caFile(path: request.caCert ?? "the system's CA store", reason: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_SSL_ENGINE_INITFAILED:
            return .tls(url: display, reason: detail)
        case CURLE_UNSUPPORTED_PROTOCOL where Answer.redirects.contains(status):
            // A redirect to a scheme libcurl was told not to follow (see CURLOPT_REDIR_PROTOCOLS).
            return .unsafeScheme(url.scheme?.lowercased() ?? "none")
        case CURLE_UNSUPPORTED_PROTOCOL:
            // No status line where one was due (an HTTP/0.9 answer, bytes that are not HTTP,
            // garbage after a 1xx): a protocol error upstream is bad data, not a scheme of ours.
            return .badData("the answer from \(display) is not HTTP (no status line)")
        case CURLE_WEIRD_SERVER_REPLY:
            return .badData("the answer from \(display) is not valid HTTP (\(detail))")
        case CURLE_OUT_OF_MEMORY where status != 0 && !headComplete:
            // libcurl refuses a header line past its own limit (100 KiB) this way.
            return .badData("a response header from \(display) is too long")
        case CURLE_URL_MALFORMAT:
            return .badURL(detail)
        case CURLE_BAD_CONTENT_ENCODING:
            return .badData("the body's Content-Encoding could not be decoded (\(detail))")
        case CURLE_GOT_NOTHING:
            return .unreachable(url: display, reason: "the server closed the connection without answering")
        default:
            return .unreachable(url: display, reason: detail)
        }
    }

    /// One header line, status lines included: a redirect and a `100 Continue` or `103 Early
    /// Hints` each start a new response head.
    private static let onHeader: cache_curl_data_callback = { bytes, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        let line = UnsafeRawBufferPointer(start: bytes, count: length)
        return transfer.header(line) ? length : 0
    }

    private func header(_ raw: UnsafeRawBufferPointer) -> Bool {
        let text = String(decoding: raw, as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            // "HTTP/1.1 200 OK\r\n", or with no reason phrase, "HTTP/1.1 200\r\n".
            let parts = text.trimmingWhitespace().split(separator: " ", maxSplits: 2)
            status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
            kept = [:]
            contentLength = nil
            encoded = false
            headComplete = false
            headerBytes = raw.count
            return true
        }
        headerBytes += raw.count
        guard headerBytes <= HTTPClient.maxHeaderBytes else {
            stopped = .badData("a response head larger than \(HTTPClient.maxHeaderBytes / 1024) KiB")
            return false
        }
        guard let colon = text.firstIndex(of: ":") else {
            guard text.trimmingWhitespace().isEmpty else { return true }
            headComplete = true
            // The blank line ending the head. A redirect stops here: its body is not wanted,
            // and one that never ends must not hold the sync.
            if Answer.redirects.contains(status) && kept["location"] != nil && request.write == nil {
                redirectHead = true
                return false
            }
            guard (200..<300).contains(status) || request.write != nil else { return true }
            // A body announced past the cap is refused unread.
            if !encoded, let contentLength {
                guard contentLength <= request.maxBytes else {
                    stopped = .tooLarge(limit: request.maxBytes)
                    return false
                }
                // Room for what the peer announced, up to a bound: a length is a claim, not bytes,
                // and a claim of 100 GB under a large cap must not be allocated. Past it the
                // buffer grows as bytes arrive.
                body.reserveCapacity(min(contentLength, Self.trustedLength))
            } else if body.isEmpty {
                // Length unknown (compressed, chunked, close-delimited): room for the cap, up to
                // 256 MiB, reserved once. Untouched pages cost no memory, and growing by doubling
                // would hold the old and the new buffer at once, near twice the cap.
                body.reserveCapacity(min(request.maxBytes, 256 << 20))
            }
            return true
        }
        let name = text[..<colon].lowercased()
        let value = text[text.index(after: colon)...].trimmingWhitespace()
        switch name {
        case "content-length": contentLength = Int(value)
        case "content-encoding": encoded = !value.isEmpty && value.lowercased() != "identity"
        case _ where Self.keptHeaders.contains(name) || name == request.cursorHeader?.lowercased(): kept[name] = value
        default: break
        }
        return true
    }

    /// The most an announced Content-Length reserves before any byte arrives.
    static let trustedLength = 64 << 20

    /// Decoded body bytes as they arrive; a redirect's body is dropped.
    private static let onBody: cache_curl_data_callback = { bytes, size, count, context in
        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        return transfer.append(UnsafeRawBufferPointer(start: bytes, count: length)) ? length : 0
    }

    private func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // An error answer's body is never read by anyone: keep none of it, and never let its
        // size turn a retryable 503 into "too large".
        guard (200..<300).contains(status) || request.write != nil else { return true }
        guard bytes.count <= request.maxBytes - body.count else {  // body.count never exceeds the cap: no overflow
            stopped = .tooLarge(limit: request.maxBytes)
            return false
        }
        body.append(contentsOf: bytes)
        request.onBytes?(body.count, encoded ? nil : contentLength)
        return true
    }
}
