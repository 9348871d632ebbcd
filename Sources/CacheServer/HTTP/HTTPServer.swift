import FoundationEssentials
import Glibc
import HTTPServerShim

/// GNU libmicrohttpd as Swift sees it: an `HTTPRequest` in, an `HTTPResponse` out. The library
/// parses HTTP/1.1, keeps connections alive and bounds their number (in all and per client),
/// their header size and their idle time; each connection has a thread of its own, so a handler
/// may block it (a stream of events, a `Prefer: wait`) without holding up another.
package final class HTTPServer: @unchecked Sendable {
    package struct Limits: Sendable {
        /// Connections open at once; past this, new ones are refused by the library.
        package var connections: UInt32 = 1024
        /// Connections open at once from one client address: one address cannot take them all.
        package var connectionsPerClient: UInt32 = 512
        /// A connection idle this long is closed (a half-open one too), and a request after
        /// the first on one must have its line and headers in within this of the answer before.
        package var idleSeconds: UInt32 = 30
        /// A connection's first request line and headers must come within this of its opening,
        /// however slowly they trickle in: else 408, and it is closed.
        package var headerSeconds: UInt32 = 10
        /// The memory for one request's line and headers: more is 414 or 431.
        package var headerBytes = 32 * 1024

        package init() {}
    }

    package struct StartError: Error, CustomStringConvertible {
        package let description: String
    }

    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let screen: @Sendable (HTTPRequest) -> HTTPResponse?
    private let cutOff: @Sendable (_ peer: String, _ seconds: Double) -> Void
    private var server: OpaquePointer?

    /// Loads libmicrohttpd; nil when it loaded, else the one line that says why not.
    package static func load() -> String? {
        cache_http_load().map { String(cString: $0) }
    }

    /// `screen` sees each request as soon as its headers are in, without its body: an answer it
    /// gives is the request's (its body never read); nil lets `handler` answer once the body is in.
    /// A connection whose first request's line and headers do not come within
    /// `Limits.headerSeconds` is answered `tooSlow` (a 408; its body is sent as it is) and
    /// closed, and `cutOff` hears of it (the peer, and the seconds it had).
    package init(address: String, port: UInt16, limits: Limits = Limits(),
                 screen: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
                 tooSlow: HTTPResponse,
                 cutOff: @escaping @Sendable (_ peer: String, _ seconds: Double) -> Void = { _, _ in },
                 handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(StartError) {
        self.handler = handler
        self.screen = screen
        self.cutOff = cutOff
        var error = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(self).toOpaque()
        server = cache_http_start(address, port, limits.connections, limits.connectionsPerClient, limits.idleSeconds, limits.headerSeconds,
                                  limits.headerBytes, { context, connection, method, path, target, cut, body, bodyLength in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            guard let request = HTTPServer.request(connection!, method, path, target, cut,
                                                   body: body.map { Array(UnsafeBufferPointer(start: $0, count: bodyLength)) } ?? []) else {
                return HTTPServer.send(HTTPServer.notText, on: connection!)
            }
            return HTTPServer.send(server.handler(request), on: connection!)
        }, { context, connection, method, path, target, cut in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            guard let request = HTTPServer.request(connection!, method, path, target, cut, body: []) else {
                return HTTPServer.send(HTTPServer.notText, on: connection!)
            }
            guard let answer = server.screen(request) else { return 0 }
            return HTTPServer.send(answer, on: connection!)
        }, { context, peer, seconds in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            server.cutOff(peer.map { String(cString: $0) } ?? "", seconds)
        }, HTTPServer.tooSlowBody(tooSlow), context, &error, error.count)
        guard server != nil else {
            throw StartError(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// A 408's body as the C layer sends it (no stream: it is sent whole, from the watchdog).
    private static func tooSlowBody(_ response: HTTPResponse) -> String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    package var port: Int { server.map { Int(cache_http_port($0)) } ?? 0 }
    package var openConnections: Int { server.map { Int(cache_http_open_connections($0)) } ?? 0 }

    /// Stops accepting connections; those open go on until `stop`.
    package func quiesce() {
        if let server { cache_http_quiesce(server) }
    }

    package func stop() {
        if let server { cache_http_stop(server) }
        server = nil
    }

    deinit { stop() }

    /// The largest body any route takes (one announced larger is refused before it is read).
    package static let largestBody = Int(cache_http_max_body)

    /// A path that is not UTF-8 must not become another path by repair.
    private static var notText: HTTPResponse { .error(400, "the request's method or path is not UTF-8 text", headers: [("Connection", "close")]) }

    /// The request as a value, read from the connection once; nil when its method, path or
    /// target is not text. A target that held a NUL keeps one at its end, so that it is refused
    /// as a target holding a control byte, never read as the part before it.
    private static func request(_ connection: OpaquePointer, _ method: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                _ target: UnsafePointer<CChar>?, _ cut: Int32, body: [UInt8]) -> HTTPRequest? {
        guard let method = method.flatMap({ String(validatingCString: $0) }), let path = path.flatMap({ String(validatingCString: $0) }),
              let target = target.flatMap({ String(validatingCString: $0) }) else { return nil }
        return request(connection, method: method, path: path, target: cut != 0 ? target + "\u{0}" : target, body: body)
    }

    private static func request(_ connection: OpaquePointer, method: String, path: String, target: String, body: [UInt8]) -> HTTPRequest {
        // The query's arguments are text or a 400 (a name must not become another by repair);
        // a header that is not UTF-8 is kept as Latin-1 (RFC 9110 §5.5: obs-text), never dropped.
        var query: [(name: String, value: String?)]? = []
        for pair in pairs(connection, { cache_http_arguments($0, $1, $2) }) {
            let value = pair.value.map { String(validating: $0, as: UTF8.self) }
            guard let name = String(validating: pair.name, as: UTF8.self), value.map({ $0 != nil }) ?? true else {
                query = nil
                break
            }
            query?.append((name, value ?? nil))
        }
        func text(_ bytes: [UInt8]) -> String {
            String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        }
        let headers = pairs(connection) { cache_http_headers($0, $1, $2) }.map { (name: text($0.name), value: text($0.value ?? [])) }
        var buffer = [CChar](repeating: 0, count: 64)
        cache_http_peer(connection, &buffer, buffer.count)
        let peer = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        nonisolated(unsafe) let live = connection
        return HTTPRequest(method: method, path: path, target: target, query: query,
                           headers: headers, body: body, peer: peer, peerIsGone: { cache_http_peer_gone(live) != 0 })
    }

    /// The name and value pairs one of the library's lists holds (a value is nil for `?flag`), as
    /// bytes, in order.
    private static func pairs(_ connection: OpaquePointer,
                              _ read: (OpaquePointer, cache_http_pair, UnsafeMutableRawPointer) -> Void) -> [(name: [UInt8], value: [UInt8]?)] {
        final class Collected { var pairs: [(name: [UInt8], value: [UInt8]?)] = [] }
        let collected = Collected()
        withExtendedLifetime(collected) {
            read(connection, { context, name, value in
                func bytes(_ text: UnsafePointer<CChar>) -> [UInt8] { Array(UnsafeRawBufferPointer(start: text, count: strlen(text))) }
                Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue().pairs.append((name.map(bytes) ?? [], value.map(bytes)))
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.pairs
    }

    private static func send(_ response: HTTPResponse, on connection: OpaquePointer) -> Int32 {
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            made = bytes.withUnsafeBytes { cache_http_buffer($0.baseAddress, $0.count) }
        case .stream(let next):
            let stream = Unmanaged.passRetained(Stream(next)).toOpaque()
            made = cache_http_callback({ context, _, buffer, size in
                Unmanaged<Stream>.fromOpaque(context!).takeUnretainedValue().fill(buffer!, size)
            }, stream, { context in
                Unmanaged<Stream>.fromOpaque(context!).release()
            })
        }
        guard let made else { return 0 }
        for (name, value) in response.headers where cache_http_add_header(made, name, value) == 0 {
            cache_http_discard(made)
            return 0
        }
        return cache_http_queue(connection, UInt32(response.status), made)
    }

    /// A streamed body: what `next` gave and the library has not taken yet.
    private final class Stream {
        let next: () throws -> [UInt8]?
        var pending: [UInt8] = []
        var offset = 0

        init(_ next: @escaping () throws -> [UInt8]?) { self.next = next }

        /// Bytes copied, -1 at the end, -2 to abort.
        func fill(_ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
            while offset == pending.count {
                let more: [UInt8]?
                do { more = try next() } catch { return -2 }
                guard let more else { return -1 }
                pending = more
                offset = 0
            }
            let count = min(size, pending.count - offset)
            pending.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
            }
            offset += count
            return count
        }
    }
}
