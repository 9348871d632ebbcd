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

    public static let defaultTimeout: Double = 30
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
    /// The HTTP status; 200 for a file.
    public var status: Int
    public var body: Data
}

/// The seam between the sync engine and the network.
public protocol Fetching: Sendable {
    func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse
}

/// Fetches http and https with URLSession and reads file URLs directly.
public struct Fetcher: Fetching {
    public init() {}

    public func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let scheme = request.url.scheme?.lowercased() ?? ""
        switch scheme {
        case "file": return try readFile(request)
        case "http", "https": return try HTTPExchange(request: request).run()
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

/// One HTTP request driven to completion through a URLSession delegate, which enforces the
/// body cap while bytes arrive, the redirect limit, and same-scheme redirects.
private final class HTTPExchange: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var status = 0
        var expectedLength: Int64 = -1
        var body = Data()
        var redirects = 0
        var failure: UpstreamError?
    }

    private let request: FetchRequest
    private let state = Mutex(State())
    private let done = DispatchSemaphore(value: 0)

    init(request: FetchRequest) { self.request = request }

    func run() throws(UpstreamError) -> FetchResponse {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeout
        configuration.timeoutIntervalForResource = request.timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeout)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue("cache/\(CacheVersion.string)", forHTTPHeaderField: "User-Agent")
        for header in request.headers {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        session.dataTask(with: urlRequest).resume()
        done.wait()

        let final = state.withLock { $0 }
        if let failure = final.failure { throw failure }
        guard (200..<300).contains(final.status) else {
            throw .httpStatus(final.status, url: Source.redacted(request.url))
        }
        return FetchResponse(status: final.status, body: final.body)
    }

    private func fail(_ error: UpstreamError) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        state.withLock {
            $0.status = http?.statusCode ?? 0
            $0.expectedLength = response.expectedContentLength
        }
        if response.expectedContentLength > Int64(request.maxBytes) {
            fail(.tooLarge(limit: request.maxBytes))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overCap = state.withLock { state -> Bool in
            state.body.append(data)
            return state.body.count > request.maxBytes
        }
        if overCap {
            fail(.tooLarge(limit: request.maxBytes))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let from = request.url.scheme?.lowercased()
        let to = newRequest.url?.scheme?.lowercased()
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
        done.signal()
    }

    private static func reason(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: "connection refused"
        case .cannotFindHost, .dnsLookupFailed: "host not found"
        case .networkConnectionLost: "connection lost"
        case .notConnectedToInternet: "no network"
        default: error.localizedDescription
        }
    }
}
