import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What to fetch and within which limits.
public struct FetchRequest: Sendable {
    public var url: URL
    public var headers: [Source.Header]
    /// The whole exchange, connect to last byte.
    public var timeout: Double
    public var maxBytes: Int
    public var maxRedirects: Int
    /// Validators from the last response applied: sent as If-None-Match / If-Modified-Since.
    public var etag: String?
    public var lastModified: String?
    /// Called as the body arrives, with the bytes so far and the announced length, if any.
    public var onBytes: (@Sendable (Int, Int?) -> Void)?

    public static let defaultTimeout: Double = 30
    /// The connect (and idle) timeout.
    public static let connectTimeout: Double = 10
    public static let defaultMaxBytes = 64 << 20

    public init(url: URL, headers: [Source.Header] = [], timeout: Double = FetchRequest.defaultTimeout,
                maxBytes: Int = FetchRequest.defaultMaxBytes, maxRedirects: Int = 5) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
    }
}

/// A complete response: the whole body has been read.
public struct FetchResponse: Sendable {
    /// The HTTP status; 200 for a file, 304 when the validators still hold (and the body is empty).
    public var status: Int
    public var body: Data
    public var etag: String?
    public var lastModified: String?

    public init(status: Int, body: Data, etag: String? = nil, lastModified: String? = nil) {
        self.status = status
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
    }

    public var notModified: Bool { status == 304 }
}

/// The seam between the sync engine and the network.
public protocol Fetching: Sendable {
    func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse
}

/// Fetches http with `PlainHTTPClient`, https with URLSession, and reads file URLs directly.
public struct Fetcher: Fetching {
    public init() {}

    public func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let scheme = request.url.scheme?.lowercased() ?? ""
        switch scheme {
        case "file": return try readFile(request)
        case "http": return try PlainHTTPClient(request: request).fetch()
        case "https": return try HTTPExchange(request: request).run()
        default: throw .unsafeScheme(scheme)
        }
    }

    private func readFile(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let path = request.url.path
        let display = Source.redacted(request.url)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreachable(url: display, reason: "no readable file at \(path)")
        }
        defer { try? handle.close() }
        // Read one byte past the cap so an oversized file is refused without loading it whole.
        let data: Data
        do { data = try handle.read(upToCount: request.maxBytes + 1) ?? Data() } catch {
            throw .unreachable(url: display, reason: "\(error.localizedDescription)")
        }
        guard data.count <= request.maxBytes else { throw .tooLarge(limit: request.maxBytes) }
        return FetchResponse(status: 200, body: data)
    }
}

/// One https request driven to completion through a URLSession delegate, which enforces the
/// body cap as bytes are delivered, the redirect limit, and same-scheme redirects. TLS
/// certificates are verified (URLSession's default; nothing here turns it off).
private final class HTTPExchange: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var status = 0
        var expectedLength: Int64 = -1
        var body = Data()
        var redirects = 0
        var failure: UpstreamError?
        var headers: [String: String] = [:]
        var finished = false
    }

    private let request: FetchRequest
    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    init(request: FetchRequest) { self.request = request }

    func run() throws(UpstreamError) -> FetchResponse {
        let configuration = URLSessionConfiguration.ephemeral
        // Connecting, and each silence after, may take at most 10 s; the whole exchange at most
        // `timeout` (enforced below, since URLSession's resource timeout is not a hard limit).
        configuration.timeoutIntervalForRequest = min(FetchRequest.connectTimeout, request.timeout)
        configuration.timeoutIntervalForResource = request.timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        var urlRequest = URLRequest(url: request.url, timeoutInterval: min(FetchRequest.connectTimeout, request.timeout))
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue("cache/\(CacheVersion.string)", forHTTPHeaderField: "User-Agent")
        for header in request.headers {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if let etag = request.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = request.lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        let task = session.dataTask(with: urlRequest)
        task.resume()
        // URLSession's timeouts are idle timers; this bounds the whole exchange, so a body that
        // drips a byte a second is cut at the timeout too.
        if done.wait(timeout: .now() + request.timeout) == .timedOut {
            fail(.timedOut(url: Source.redacted(request.url), seconds: request.timeout))
            task.cancel()
            done.wait()
        }

        let final = state.withLock { $0 }
        if let failure = final.failure { throw failure }
        if final.status == 304 {
            return FetchResponse(status: 304, body: Data(), etag: final.headers["etag"], lastModified: final.headers["last-modified"])
        }
        guard (200..<300).contains(final.status) else {
            throw .httpStatus(final.status, url: Source.redacted(request.url),
                              retryAfter: final.headers["retry-after"].flatMap { RetryAfter.seconds($0) })
        }
        return FetchResponse(status: final.status, body: final.body,
                             etag: final.headers["etag"], lastModified: final.headers["last-modified"])
    }

    private func fail(_ error: UpstreamError) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        state.withLock {
            $0.status = http?.statusCode ?? 0
            $0.expectedLength = response.expectedContentLength
            $0.headers = headers
        }
        if response.expectedContentLength > Int64(request.maxBytes) {
            fail(.tooLarge(limit: request.maxBytes))
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (overCap, received, expected) = state.withLock { state -> (Bool, Int, Int64) in
            state.body.append(data)
            return (state.body.count > request.maxBytes, state.body.count, state.expectedLength)
        }
        request.onBytes?(received, expected > 0 ? Int(expected) : nil)
        if overCap {
            fail(.tooLarge(limit: request.maxBytes))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let from = request.url.scheme?.lowercased()
        // Judge the Location the server sent: Foundation may already have rewritten a
        // foreign-scheme target into a same-host http URL.
        let location = (response.allHeaderFields.first { ($0.key as? String)?.lowercased() == "location" }?.value as? String)
            .flatMap { URL(string: $0, relativeTo: response.url) }
        let to = (location?.scheme ?? newRequest.url?.scheme)?.lowercased()
        let count = state.withLock { state -> Int in state.redirects += 1; return state.redirects }
        if to != from {
            fail(.unsafeScheme(to ?? "none"))
            completionHandler(nil)
            task.cancel()
        } else if count > request.maxRedirects {
            fail(.tooManyRedirects(url: Source.redacted(request.url)))
            completionHandler(nil)
            task.cancel()
        } else {
            completionHandler(newRequest)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let url = Source.redacted(request.url)
        let (received, expected) = state.withLock { (Int64($0.body.count), $0.expectedLength) }
        if let error = error as? URLError {
            switch error.code {
            case .cancelled: break  // a limit above already said why
            case .timedOut: fail(.timedOut(url: url, seconds: request.timeout))
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                fail(.tls(url: url, reason: error.localizedDescription))
            case _ where error.localizedDescription.contains("SSL") || error.localizedDescription.contains("TLS"):
                fail(.tls(url: url, reason: error.localizedDescription))
            default:
                if expected > 0 && received < expected {
                    fail(.truncated(url: url, received: Int(received), expected: Int(expected)))
                } else {
                    fail(.unreachable(url: url, reason: Self.reason(error)))
                }
            }
        } else if let error {
            fail(.unreachable(url: url, reason: error.localizedDescription))
        } else if expected > 0 && received < expected {
            fail(.truncated(url: url, received: Int(received), expected: Int(expected)))
        }
        // Signal once: the watchdog in run() may already have given up and be waiting again.
        let first = state.withLock { state -> Bool in
            defer { state.finished = true }
            return !state.finished
        }
        if first { done.signal() }
    }

    private static func reason(_ error: URLError) -> String {
        switch error.code {
        // libcurl reports a failed TLS handshake the same way as a refused connection.
        case .cannotConnectToHost: "could not connect or complete the TLS handshake"
        case .cannotFindHost, .dnsLookupFailed: "host not found"
        case .networkConnectionLost: "connection lost"
        case .notConnectedToInternet: "no network"
        default: error.localizedDescription
        }
    }
}

/// The `Retry-After` header.
enum RetryAfter {
    /// Seconds from now: the header holds either a number of seconds or an HTTP date.
    static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(text), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
