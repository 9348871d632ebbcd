import Foundation

/// What to fetch and within which limits.
public struct FetchRequest: Sendable {
    public var url: URL
    public var headers: [Source.Header]
    /// The time the whole sync may take, retries and waits included (for messages)...
    public var timeout: Double
    /// ...and when it runs out, on the monotonic clock.
    public var deadline: ContinuousClock.Instant
    public var maxBytes: Int
    public var maxRedirects: Int
    /// A PEM bundle of CAs trusted instead of the system's, for internal CAs.
    public var caCert: String?
    /// Validators from the last response applied: sent as If-None-Match / If-Modified-Since.
    public var etag: String?
    public var lastModified: String?
    /// Called as the body arrives, with the bytes so far and the announced length, if any.
    public var onBytes: (@Sendable (Int, Int?) -> Void)?

    public static let defaultTimeout: Double = 30
    /// The connect timeout.
    public static let connectTimeout: Double = 10
    public static let defaultMaxBytes = 64 << 20

    public init(url: URL, headers: [Source.Header] = [], timeout: Double = FetchRequest.defaultTimeout,
                deadline: ContinuousClock.Instant? = nil, maxBytes: Int = FetchRequest.defaultMaxBytes,
                maxRedirects: Int = 5, caCert: String? = nil) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.deadline = deadline ?? ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
        self.caCert = caCert
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

/// Fetches http and https through libcurl (`HTTPClient`) and reads file URLs directly.
public struct Fetcher: Fetching {
    public init() {}

    public func fetch(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let scheme = request.url.scheme?.lowercased() ?? ""
        switch scheme {
        case "file": return try readFile(request)
        case "http", "https": return try HTTPClient(request: request).fetch()
        default: throw .unsafeScheme(scheme)
        }
    }

    private func readFile(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let path = request.url.path
        let display = Source.redacted(request.url)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .noFile(path: path) }
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

/// The `Retry-After` header.
enum RetryAfter {
    /// The longest wait taken from a server; what the engine does with it is capped lower still
    /// (the backoff between syncs is at most an hour).
    static let longest: Double = 86_400

    /// Seconds from now, within 0...`longest`: the header holds either a number of seconds
    /// (digits only: not "inf", "1e300" or "-5") or an HTTP date.
    static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // Any run of digits is a number here; a huge one is simply "as long as allowed".
            return min(Double(text) ?? longest, longest)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        guard seconds.isFinite else { return nil }
        return min(max(0, seconds), longest)
    }
}
