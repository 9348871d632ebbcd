import Foundation

/// A small HTTP/1.1 client over a POSIX socket, for `http://` sources.
///
/// URLSession on Linux reads ahead of its delegate, so a body over the cap could fill memory
/// before the refusal landed. Reading the socket ourselves, the cap holds while bytes arrive,
/// the whole exchange is bounded by one deadline, and a short body is told apart from a closed
/// connection. `https://` goes through URLSession (TLS, always verified) in the `cache-https`
/// helper (see HTTPSHelper).
struct PlainHTTPClient {
    let request: FetchRequest

    func fetch() throws(UpstreamError) -> FetchResponse {
        let deadline = Date().addingTimeInterval(request.timeout)
        var url = request.url
        var redirects = 0
        while true {
            let answer = try exchange(url, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(answer.status), let location = answer.headers["location"] else {
                return try finish(answer, url: url)
            }
            // A redirect: same scheme only, and at most `maxRedirects` of them.
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                throw .badData("a redirect to an unreadable Location")
            }
            guard next.scheme?.lowercased() == "http" else { throw .unsafeScheme(next.scheme?.lowercased() ?? "none") }
            redirects += 1
            guard redirects <= request.maxRedirects else { throw .tooManyRedirects(url: Source.redacted(request.url)) }
            url = next
        }
    }

    private func finish(_ answer: Answer, url: URL) throws(UpstreamError) -> FetchResponse {
        if answer.status == 304 {
            return FetchResponse(status: 304, body: Data(), etag: answer.headers["etag"], lastModified: answer.headers["last-modified"])
        }
        guard (200..<300).contains(answer.status) else {
            throw .httpStatus(answer.status, url: Source.redacted(url), retryAfter: answer.headers["retry-after"].flatMap { RetryAfter.seconds($0) })
        }
        return FetchResponse(status: answer.status, body: answer.body, etag: answer.headers["etag"], lastModified: answer.headers["last-modified"])
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    /// One request and its response on a fresh connection.
    private func exchange(_ url: URL, deadline: Date) throws(UpstreamError) -> Answer {
        let display = Source.redacted(url)
        guard let host = url.host, !host.isEmpty else { throw .unreachable(url: display, reason: "no host in the URL") }
        let port = url.port ?? 80
        let socket = try Socket.connect(host: host, port: port, deadline: deadline,
                                        connectTimeout: min(FetchRequest.connectTimeout, request.timeout), display: display)
        defer { socket.close() }

        var target = url.path.isEmpty ? "/" : URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        if target.isEmpty { target = "/" }
        if let query = url.query { target += "?" + query }
        var head = "GET \(target) HTTP/1.1\r\nHost: \(host)\(url.port.map { ":\($0)" } ?? "")\r\n"
        head += "User-Agent: cache/\(CacheVersion.string)\r\nAccept: application/json\r\nAccept-Encoding: identity\r\nConnection: close\r\n"
        for header in request.headers { head += "\(header.name): \(header.value)\r\n" }
        if let etag = request.etag { head += "If-None-Match: \(etag)\r\n" }
        if let lastModified = request.lastModified { head += "If-Modified-Since: \(lastModified)\r\n" }
        head += "\r\n"
        try socket.send(Array(head.utf8), deadline: deadline, display: display, timeout: request.timeout)

        var reader = Reader(socket: socket, deadline: deadline, display: display, timeout: request.timeout)
        let (status, headers) = try reader.readHead()
        if status == 304 || status == 204 || (100..<200).contains(status) {
            return Answer(status: status, headers: headers, body: Data())
        }
        let cap = request.maxBytes
        var body = Data()
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            try reader.readChunked(into: &body, cap: cap, onBytes: request.onBytes)
        } else if let lengthText = headers["content-length"], let length = Int(lengthText.trimmingCharacters(in: .whitespaces)) {
            guard length <= cap else { throw .tooLarge(limit: cap) }
            body.reserveCapacity(length)
            try reader.read(exactly: length, into: &body, onBytes: request.onBytes)
        } else {
            try reader.readToEnd(into: &body, cap: cap, onBytes: request.onBytes)
        }
        return Answer(status: status, headers: headers, body: body)
    }
}

/// A connected TCP socket with a deadline on every wait.
private struct Socket {
    let fd: Int32

    static func connect(host: String, port: Int, deadline: Date, connectTimeout: Double, display: String) throws(UpstreamError) -> Socket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw .unreachable(url: display, reason: "host not found")
        }
        defer { freeaddrinfo(list) }
        var reason = "connection refused"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        let connectDeadline = min(deadline, Date().addingTimeInterval(connectTimeout))
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return Socket(fd: fd) }
            guard errno == EINPROGRESS else { reason = String(cString: strerror(errno)).lowercased(); Glibc.close(fd); continue }
            switch wait(fd, events: Int16(POLLOUT), until: connectDeadline) {
            case .ready:
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 { return Socket(fd: fd) }
                reason = error == ECONNREFUSED ? "connection refused" : String(cString: strerror(error)).lowercased()
            case .timedOut:
                Glibc.close(fd)
                throw .timedOut(url: display, seconds: connectTimeout)
            }
            Glibc.close(fd)
        }
        throw .unreachable(url: display, reason: reason)
    }

    enum Wait { case ready, timedOut }

    static func wait(_ fd: Int32, events: Int16, until deadline: Date) -> Wait {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let result = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if result > 0 { return .ready }
            if result < 0 && errno != EINTR { return .ready }  // let the read or write report it
        }
    }

    func send(_ bytes: [UInt8], deadline: Date, display: String, timeout: Double) throws(UpstreamError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written > 0 { offset += written; continue }
            if written < 0 && (errno == EAGAIN || errno == EINTR) {
                if Self.wait(fd, events: Int16(POLLOUT), until: deadline) == .timedOut { throw .timedOut(url: display, seconds: timeout) }
                continue
            }
            throw .unreachable(url: display, reason: "connection lost")
        }
    }

    func close() { Glibc.close(fd) }
}

/// Reads a response off a socket: the head, then the body in whichever framing it has.
private struct Reader {
    let socket: Socket
    let deadline: Date
    let display: String
    let timeout: Double
    /// Bytes read past what has been consumed.
    var buffer: [UInt8] = []
    var start = 0
    var closed = false

    init(socket: Socket, deadline: Date, display: String, timeout: Double) {
        self.socket = socket
        self.deadline = deadline
        self.display = display
        self.timeout = timeout
    }

    private var available: Int { buffer.count - start }

    /// Reads more bytes from the socket; false at the end of the stream.
    private mutating func fill() throws(UpstreamError) -> Bool {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(socket.fd, $0.baseAddress, $0.count) }
            if count > 0 { buffer.append(contentsOf: chunk[0..<count]); return true }
            if count == 0 { closed = true; return false }
            if errno == EAGAIN || errno == EINTR {
                if Socket.wait(socket.fd, events: Int16(POLLIN), until: deadline) == .timedOut {
                    throw .timedOut(url: display, seconds: timeout)
                }
                continue
            }
            closed = true
            return false
        }
    }

    /// One line ending in CRLF (or LF), without it.
    private mutating func readLine(limit: Int = 64 << 10) throws(UpstreamError) -> String? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var end = newline
                if end > start && buffer[end - 1] == 0x0D { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                return line
            }
            guard available < limit else { throw .badData("a response header line longer than \(limit) bytes") }
            guard try fill() else { return nil }
        }
    }

    mutating func readHead() throws(UpstreamError) -> (Int, [String: String]) {
        guard let statusLine = try readLine() else { throw .unreachable(url: display, reason: "the connection closed before a response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw .badData("not an HTTP response (it starts \(PayloadDecoder.preview(Data(statusLine.utf8))))")
        }
        var headers: [String: String] = [:]
        while let line = try readLine(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers)
    }

    mutating func read(exactly length: Int, into body: inout Data, onBytes: (@Sendable (Int, Int?) -> Void)?) throws(UpstreamError) {
        while body.count < length {
            if available == 0, try !fill() {
                throw .truncated(url: display, received: body.count, expected: length)
            }
            let take = min(available, length - body.count)
            body.append(contentsOf: buffer[start..<(start + take)])
            start += take
            onBytes?(body.count, length)
        }
    }

    mutating func readToEnd(into body: inout Data, cap: Int, onBytes: (@Sendable (Int, Int?) -> Void)?) throws(UpstreamError) {
        while true {
            if available > 0 {
                body.append(contentsOf: buffer[start...])
                start = buffer.count
                guard body.count <= cap else { throw .tooLarge(limit: cap) }
                onBytes?(body.count, nil)
            }
            guard try fill() else { return }
        }
    }

    mutating func readChunked(into body: inout Data, cap: Int, onBytes: (@Sendable (Int, Int?) -> Void)?) throws(UpstreamError) {
        while true {
            guard let sizeLine = try readLine() else {
                throw .truncated(url: display, received: body.count, expected: -1)
            }
            let sizeText = sizeLine.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw .badData("a malformed chunk size in the response") }
            if size == 0 {
                while let trailer = try readLine(), !trailer.isEmpty {}
                return
            }
            guard body.count + size <= cap else { throw .tooLarge(limit: cap) }
            try read(exactly: body.count + size, into: &body, onBytes: onBytes)
            _ = try readLine()  // the CRLF after the chunk
        }
    }
}
