import FoundationEssentials

extension Fetcher {
    /// What to fetch and within which limits.
    ///
    /// ```swift
    /// let request = Fetcher.Request(url: URL(string: "https://api.example/items")!, timeout: 10)
    /// ```
    public struct Request: Sendable {
        /// What to fetch.
        public var url: URL
        /// Headers to send besides the defaults.
        public var headers: [Source.Header]
        /// The time the whole sync may take, retries and waits included (for messages)...
        public var timeout: Double
        /// ...and when it runs out, on the monotonic clock.
        public var deadline: ContinuousClock.Instant
        /// The largest body accepted.
        public var maxBytes: Int
        /// Redirects followed before giving up.
        public var maxRedirects: Int
        /// A PEM bundle of CAs trusted instead of the system's, for internal CAs.
        public var caCert: String?
        /// Validators from the last response applied: sent as If-None-Match / If-Modified-Since.
        public var etag: String?
        /// The `Last-Modified` of the cached rows, sent as `If-Modified-Since`.
        public var lastModified: String?
        /// Called as the body arrives, with the bytes so far and the announced length, if any.
        public var onBytes: (@Sendable (Int, Int?) -> Void)?
        /// A response header to hand back as `Fetcher.Response.cursor` (a paging cursor), by name.
        public var cursorHeader: String?
        /// A form body (`application/x-www-form-urlencoded`): the request is a POST (an OAuth2
        /// token request).
        public var form: String?
        /// The media types asked for (`Accept`), unless `headers` name their own: each kind's own
        /// (`text/csv` for a csv source), JSON for everything else.
        public var accept = "application/json"
        /// A write (`cache push`): the method and the JSON body sent, and every answer handed back as
        /// it is (its status, headers the push reads and up to `maxBytes` of its body) instead of an
        /// error status thrown; no redirect is followed.
        package var write: (method: String, body: Data?)?
        /// Query parameters whose values came from the environment (`?key=${API_KEY}`): hidden
        /// in messages whatever their names, as the names that look secret are.
        package var secretParameters: Set<String> = []
        /// The URL as messages show it: `Source.redacted`, and this request's secret parameters.
        package func display(_ url: URL) -> String { Source.redacted(url, hiding: secretParameters) }
        /// A handle whose connections later requests reuse (a push's worker, one request at a time);
        /// nil: a handle of the request's own.
        package var connection: ReusedConnection?

        /// Seconds a request may take by default.
        public static let defaultTimeout: Double = 30
        /// The connect timeout.
        public static let connectTimeout: Double = 10
        /// The largest body accepted by default: 64 MiB.
        public static let defaultMaxBytes = 64 << 20
        /// The largest cap a source may set: 16 GiB. A sync holds the whole body in memory while it
        /// checks it, so a cap past any machine's memory protects nothing.
        public static let largestMaxBytes = 16 << 30

        /// A request for `url`.
        public init(url: URL, headers: [Source.Header] = [], timeout: Double = Fetcher.Request.defaultTimeout,
                    deadline: ContinuousClock.Instant? = nil, maxBytes: Int = Fetcher.Request.defaultMaxBytes,
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
}

extension Fetcher {
    /// A complete response: the whole body has been read.
    ///
    /// ```swift
    /// let response = try Fetcher().fetch(Fetcher.Request(url: URL(string: "https://api.example/items")!))
    /// print(response.status, response.body.count, response.etag ?? "-")
    /// ```
    public struct Response: Sendable {
        /// The HTTP status; 200 for a file, 304 when the validators still hold (and the body is empty).
        public var status: Int
        /// The body, decompressed.
        public var body: Data
        /// The response's `ETag`, to send back as `If-None-Match`.
        public var etag: String?
        /// The response's `Last-Modified`, to send back as `If-Modified-Since`.
        public var lastModified: String?
        /// The `Link` header, for sources that page with it.
        public var link: String?
        /// The header `Fetcher.Request.cursorHeader` named, if the response has it.
        public var cursor: String?
        /// For a write: the answer's `Retry-After` in seconds and its `Location`.
        package var retryAfter: Double?
        package var location: String?

        /// A response (a test hands canned ones to `Cache`).
        public init(status: Int, body: Data, etag: String? = nil, lastModified: String? = nil, link: String? = nil) {
            self.status = status
            self.body = body
            self.etag = etag
            self.lastModified = lastModified
            self.link = link
        }

        /// A 304: the cached rows are still what upstream has.
        public var notModified: Bool { status == 304 }
    }
}

/// The seam between the sync engine and the network.
/// An app or a test can stand in for the network:
///
/// ```swift
/// struct Canned: Fetching {
///     func fetch(_ request: Fetcher.Request) throws(CacheError.Upstream) -> Fetcher.Response {
///         Fetcher.Response(status: 200, body: Data(#"[{"id": 1}]"#.utf8))
///     }
/// }
/// let cache = try Cache(path: path, fetcher: Canned())
/// ```
///
/// The body a fetch returns is the sync's from then on: a large one is given back to the system
/// as it is decoded, so it must own its bytes (a `Data` made with `bytesNoCopy` over memory the
/// app still reads would see them zeroed).
public protocol Fetching: Sendable {
    func fetch(_ request: Fetcher.Request) throws(CacheError.Upstream) -> Fetcher.Response
}

/// Fetches http and https through libcurl (`HTTPClient`) and reads file URLs directly.
///
/// ```swift
/// let cache = try Cache(path: path, fetcher: Fetcher())   // the default
/// ```
public struct Fetcher: Fetching {
    /// The libcurl fetcher (libcurl is loaded on the first fetch).
    public init() {}

    /// Fetches `request`, following redirects.
    public func fetch(_ request: Fetcher.Request) throws(CacheError.Upstream) -> Fetcher.Response {
        let scheme = request.url.scheme?.lowercased() ?? ""
        switch scheme {
        case "file": return try readFile(request)
        case "http", "https": return try HTTPClient(request: request).fetch()
        default: throw .unsafeScheme(scheme)
        }
    }

    /// Reads a regular file, under the cap and the sync's deadline. Anything else (a FIFO, a
    /// device such as /dev/stdin, a folder) is refused before a byte is read: reading one could
    /// wait forever. Opened without blocking, so even a FIFO with no writer is only looked at.
    private func readFile(_ request: FetchRequest) throws(UpstreamError) -> FetchResponse {
        let path = request.url.path
        let display = request.display(request.url)
        guard let descriptor = FileSystem.openForReading(path, blocking: false) else { throw .noFile(path: path) }
        defer { FileSystem.closeDescriptor(descriptor) }
        guard let status = FileSystem.status(descriptor: descriptor) else { throw .noFile(path: path) }
        guard status.kind == .regular else { throw .notAFile(path: path, what: Self.describe(status.kind)) }
        guard status.size <= request.maxBytes else { throw .tooLarge(limit: request.maxBytes) }
        var data = Data()
        data.reserveCapacity(status.size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        // One byte past the cap is read, so a file that grew while read is still refused;
        // `room` never passes the cap, so nothing overflows however large the cap is.
        while data.count <= request.maxBytes {
            guard ContinuousClock.now < request.deadline else { throw .timedOut(url: display, seconds: request.timeout) }
            let room = request.maxBytes - data.count
            let wanted = room < chunk.count ? room + 1 : chunk.count
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { buffer in
                    try FileSystem.readSome(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]))
                }
            } catch {
                throw .unreachable(url: display, reason: "\(error)")
            }
            if count == 0 { break }
            data.append(contentsOf: chunk[0..<count])
        }
        guard data.count <= request.maxBytes else { throw .tooLarge(limit: request.maxBytes) }
        return FetchResponse(status: 200, body: data)
    }

    private static func describe(_ kind: FileSystem.Kind) -> String {
        switch kind {
        case .fifo: "a FIFO"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .folder: "a folder"
        case .socket: "a socket"
        default: "something else"
        }
    }
}

/// The `Retry-After` header.
package enum RetryAfter {
    /// The longest wait taken from a server; what the engine does with it is capped lower still
    /// (the backoff between syncs is at most an hour).
    static let longest: Double = 86_400

    /// Seconds from now, within 0...`longest`: the header holds either a number of seconds
    /// (digits only: not "inf", "1e300" or "-5") or an HTTP date.
    static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingSpaces()
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // Any run of digits is a number here; a huge one is simply "as long as allowed".
            return min(Double(text) ?? longest, longest)
        }
        // An HTTP date: `Sun, 06 Nov 1994 08:49:37 GMT` (C locale names, as HTTP requires).
        guard let date = httpDate(text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        guard seconds.isFinite else { return nil }
        return min(max(0, seconds), longest)
    }

    /// `X-RateLimit-Reset`: the epoch second the limit resets, as seconds from now, at most
    /// `longest`; nil when it is not a number or has passed.
    static func resetSeconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingSpaces()
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let epoch = Double(text) else { return nil }
        // A reset already passed says nothing of when to ask again: the usual backoff does.
        guard epoch > now.timeIntervalSince1970 else { return nil }
        return min(epoch - now.timeIntervalSince1970, longest)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110's IMF-fixdate), or nil.
    package static func httpDate(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekdays = ["Mon,", "Tue,", "Wed,", "Thu,", "Fri,", "Sat,", "Sun,"]
        guard fields.count == 6, weekdays.contains(String(fields[0])), fields[5] == "GMT",
              let day = Int(fields[1]), (1...31).contains(day), let month = months.firstIndex(of: String(fields[2])),
              let year = Int(fields[3]), (1970...9999).contains(year) else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        let time = CivilTime(year: year, month: month + 1, day: day, hour: clock[0], minute: clock[1], second: clock[2])
        return Date(timeIntervalSince1970: Double(time.secondsUTC))
    }
}

/// The `Link` header (RFC 8288), as GitHub sends it: `<url>; rel="next", <url>; rel="last"`.
enum LinkHeader {
    /// The target of the link whose relation types include `next`.
    static func next(_ header: String) -> String? {
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = String(rest[rest.index(after: open)..<close])
            let afterTarget = rest[rest.index(after: close)...]
            let end = afterTarget.firstIndex(of: "<") ?? afterTarget.endIndex
            let parameters = afterTarget[..<end].lowercased()
            if let rel = parameters.firstRange(of: "rel=") {
                let value = parameters[rel.upperBound...].prefix { $0 != ";" && $0 != "," }
                let types = value.trimmed { $0 == "\"" || $0 == " " }.split(separator: " ")
                if types.contains("next") { return target }
            }
            rest = afterTarget[end...]
        }
        return nil
    }
}

/// The engine's names for them; an app sees `Fetcher.Request` and `Fetcher.Response`.
package typealias FetchRequest = Fetcher.Request
package typealias FetchResponse = Fetcher.Response
