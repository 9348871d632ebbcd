import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OfflineCache

/// Fetches http and https through `URLSession`: the transport for a platform where libcurl
/// cannot be loaded (an Apple platform's app), behind the same `Fetching` seam as `Fetcher`.
/// It keeps the libcurl transport's promises, through the same code where it can
/// (`HTTPClient.follow`): the whole fetch within the request's deadline, the body cap on the
/// decoded bytes as they arrive, redirects followed by the library (at most `maxRedirects`, to
/// http or https only, the source's headers and token to its own origin alone), validators
/// sent and a 304 handed back, never answered from a cache of URLSession's own. File URLs are
/// read as `Fetcher` reads them.
///
/// ```swift
/// let cache = try Cache(path: path, fetcher: URLSessionFetcher())
/// ```
///
/// It is built and tested on Linux (FoundationNetworking), in the same run as libcurl's
/// transport; it is not part of the `cache` program, which stays one static binary. A source's
/// own CA bundle (`--ca-cert`) needs the libcurl transport: this one trusts the system's store,
/// and refuses such a source rather than ignore its bundle.
public struct URLSessionFetcher: Fetching {
    /// The URLSession fetcher (a session of its own for each request, cached nothing).
    public init() {}

    /// Fetches `request`, following redirects as `Fetcher` does.
    public func fetch(_ request: Fetcher.Request) throws(CacheError.Upstream) -> Fetcher.Response {
        let scheme = request.url.scheme?.lowercased() ?? ""
        switch scheme {
        case "file": return try Fetcher().fetch(request)
        case "http", "https": break
        default: throw .unsafeScheme(scheme)
        }
        if let caCert = request.caCert {
            throw .caFile(path: caCert, reason: "the URLSession transport trusts the system's certificates alone; a source's own CA bundle needs the libcurl transport (Fetcher)")
        }
        return try HTTPClient.follow(request) { url, headers throws(UpstreamError) in
            try Exchange(request: request, url: url, headers: headers).perform()
        }
    }
}

/// One request and its answer through a `URLSession` of its own, which follows no redirect.
private final class Exchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let request: FetchRequest
    private let url: URL
    private let headers: [Source.Header]
    private let display: String
    private let finished = DispatchSemaphore(value: 0)
    /// The delegate's callbacks run on the session's queue, one at a time; `perform` reads what
    /// they left once `finished` is signalled.
    private var status = 0
    private var answerHeaders: [String: String] = [:]
    private var body = Data()
    private var expected: Int?
    private var stopped: UpstreamError?
    private var failure: (any Error)?
    /// An error status's body reached the cap and was cut there: its status is the answer.
    private var errorBodyCut = false

    init(request: FetchRequest, url: URL, headers: [Source.Header]) {
        self.request = request
        self.url = url
        self.headers = headers
        display = Source.redacted(url)
    }

    func perform() throws(UpstreamError) -> TransportAnswer {
        let remaining = Double((request.deadline - ContinuousClock.now) / .milliseconds(1)) / 1000
        guard remaining > 0 else { throw .timedOut(url: display, seconds: request.timeout) }
        let configuration = URLSessionConfiguration.ephemeral
        // Nothing answered from a cache of URLSession's own: a 304 is the engine's to read.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForResource = remaining
        configuration.timeoutIntervalForRequest = min(remaining, Double(HTTPClient.idleTimeout))
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }

        var made = URLRequest(url: url)
        made.httpMethod = request.write?.method ?? (request.form != nil ? "POST" : "GET")
        made.setValue("cache/\(CacheVersion.string)", forHTTPHeaderField: "User-Agent")
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) { made.setValue(request.accept, forHTTPHeaderField: "Accept") }
        for header in headers { made.addValue(header.value, forHTTPHeaderField: header.name) }
        if let etag = request.etag { made.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = request.lastModified { made.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        if let form = request.form {
            made.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            made.httpBody = Data(form.utf8)
        }
        if let write = request.write, let sent = write.body {
            made.setValue("application/json", forHTTPHeaderField: "Content-Type")
            made.httpBody = sent
        }
        let task = session.dataTask(with: made)
        task.resume()
        // The whole fetch within the deadline: FoundationNetworking keeps no resource timeout
        // (its request timeout restarts with every byte), so an upstream trickling a byte at a
        // time is cut off here.
        if finished.wait(timeout: .now() + remaining) == .timedOut {
            task.cancel()
            finished.wait()
            throw .timedOut(url: display, seconds: request.timeout)
        }

        if let stopped { throw stopped }
        if let failure {
            let code = (failure as? URLError)?.code
            switch code {
            case .timedOut?: throw .timedOut(url: display, seconds: request.timeout)
            case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?,
                 .serverCertificateNotYetValid?, .serverCertificateHasUnknownRoot?, .clientCertificateRejected?:
                throw .tls(url: display, reason: failure.localizedDescription)
            default: throw .unreachable(url: display, reason: failure.localizedDescription)
            }
        }
        return TransportAnswer(status: status, headers: answerHeaders, body: body)
    }

    // The redirect itself is the answer: the library follows it, or not (`HTTPClient.follow`).
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if let response = response as? HTTPURLResponse {
            status = response.statusCode
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { answerHeaders[name.lowercased()] = value }
            }
            expected = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard stopped == nil else { return }
        // The cap on the bytes as they come, decoded: an error status's body is not read past
        // it either, but never fails the fetch (its status says what went wrong).
        guard body.count + data.count <= request.maxBytes else {
            if (200..<300).contains(status) || request.write != nil {
                stopped = .tooLarge(limit: request.maxBytes)
                dataTask.cancel()
            } else {
                errorBodyCut = true
                dataTask.cancel()
            }
            return
        }
        body.append(data)
        request.onBytes?(body.count, expected)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if stopped == nil, !errorBodyCut, let error { failure = error }
        finished.signal()
    }
}
