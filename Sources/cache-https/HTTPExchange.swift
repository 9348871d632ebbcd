import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OfflineCache
import Synchronization

/// One https request driven to completion through a URLSession delegate, which enforces the
/// body cap as bytes are delivered, the redirect limit, and same-scheme redirects, and passes
/// the answer on to `cache` as it arrives. TLS certificates are verified (URLSession's
/// default; nothing here turns it off).
final class HTTPExchange: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var expectedLength: Int64 = -1
        var received = 0
        var redirects = 0
        var failure: UpstreamError?
        var finished = false
    }

    private let request: FetchRequest
    private let output: FrameWriter
    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    init(request: FetchRequest, output: FrameWriter) {
        self.request = request
        self.output = output
    }

    /// Runs the exchange and writes its last frame: done, or the failure.
    func run() {
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
        // No delegate call comes after completion: this is the last frame.
        if let failure = state.withLock({ $0.failure }) {
            output.write(.failure, (try? JSONEncoder().encode(failure)) ?? Data())
        } else {
            output.write(.done)
        }
    }

    private func fail(_ error: UpstreamError) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] {
            guard let key = (key as? String)?.lowercased(), let value = value as? String else { continue }
            if ["etag", "last-modified", "retry-after"].contains(key) { headers[key] = value }
        }
        state.withLock { $0.expectedLength = response.expectedContentLength }
        if response.expectedContentLength > Int64(request.maxBytes) {
            fail(.tooLarge(limit: request.maxBytes))
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        let head = HTTPSWire.Head(status: http?.statusCode ?? 0, headers: headers, expectedLength: response.expectedContentLength)
        output.write(.head, (try? JSONEncoder().encode(head)) ?? Data())
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overCap = state.withLock { state -> Bool in
            state.received += data.count
            return state.received > request.maxBytes
        }
        if overCap {
            fail(.tooLarge(limit: request.maxBytes))
            dataTask.cancel()
        } else {
            output.write(.body, data)
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
        let (received, expected) = state.withLock { (Int64($0.received), $0.expectedLength) }
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
