import FoundationEssentials
import Glibc
import HTTPServerShim

/// GNU libmicrohttpd as Swift sees it: requests in, responses out. The library parses HTTP/1.1,
/// keeps connections alive and bounds their number, their header size and their idle time; each
/// connection has a thread of its own, so a handler may block it (a stream of events, a
/// `Prefer: wait`) without holding up another.
final class HTTPServer: @unchecked Sendable {
    struct Request {
        let connection: OpaquePointer
        let method: String
        /// The path, percent-decoded, without the query.
        let path: String

        /// A request header (its name in any case), or nil.
        func header(_ name: String) -> String? {
            cache_http_header(connection, name).map { String(cString: $0) }
        }

        /// The query's arguments in order, decoded (a value is nil for a name without `=`); nil
        /// when one is not UTF-8 text.
        var arguments: [(name: String, value: String?)]? {
            final class Collected { var pairs: [(name: String, value: String?)] = []; var text = true }
            let collected = Collected()
            withExtendedLifetime(collected) {
                cache_http_arguments(connection, { context, name, value in
                    let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
                    let name = name.flatMap { String(validatingCString: $0) }
                    let text = value.map { String(validatingCString: $0) }
                    guard let name, text.map({ $0 != nil }) ?? true else { collected.text = false; return }
                    collected.pairs.append((name, text ?? nil))
                }, Unmanaged.passUnretained(collected).toOpaque())
            }
            return collected.text ? collected.pairs : nil
        }

        /// Whether the client has hung up: a stream waiting for something to send asks, so a
        /// connection nobody reads does not keep its thread.
        var peerIsGone: Bool { cache_http_peer_gone(connection) != 0 }

        /// The client's address.
        var peer: String {
            var buffer = [CChar](repeating: 0, count: 64)
            cache_http_peer(connection, &buffer, buffer.count)
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    struct Response {
        var status: Int
        var headers: [(String, String)] = []
        var body: Body = .bytes([])

        enum Body {
            case bytes([UInt8])
            /// Made as it is sent: each call gives the next bytes, or nil at the end; it may block.
            /// A throw cuts the response short, so the client sees it incomplete, never whole.
            case stream(() throws -> [UInt8]?)
        }

        init(status: Int, headers: [(String, String)] = [], body: Body = .bytes([])) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    struct Limits {
        /// Connections open at once; past this, new ones are refused by the library.
        var connections: UInt32 = 1024
        /// A connection idle this long is closed (a half-open one too).
        var idleSeconds: UInt32 = 30
        /// The memory for one request's line and headers: more is 414 or 431.
        var headerBytes = 32 * 1024
    }

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    private let handler: (Request) -> Response
    private var server: OpaquePointer?

    /// Loads libmicrohttpd; nil when it loaded, else the one line that says why not.
    static func load() -> String? {
        cache_http_load().map { String(cString: $0) }
    }

    init(address: String, port: UInt16, limits: Limits = Limits(), handler: @escaping (Request) -> Response) throws(StartError) {
        self.handler = handler
        var error = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(self).toOpaque()
        server = cache_http_start(address, port, limits.connections, limits.idleSeconds, limits.headerBytes, { context, connection, method, path in
            let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
            // Text, or a 400: a path that is not UTF-8 must not become another path by repair.
            guard let method = String(validatingCString: method!), let path = String(validatingCString: path!) else {
                return HTTPServer.send(Response(status: 400, headers: [("Content-Type", "application/json")],
                                                body: .bytes(Array("{\"error\": \"the request's method or path is not UTF-8 text\"}\n".utf8))), on: connection!)
            }
            return HTTPServer.send(server.handler(Request(connection: connection!, method: method, path: path)), on: connection!)
        }, context, &error, error.count)
        guard server != nil else {
            throw StartError(description: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    var port: Int { server.map { Int(cache_http_port($0)) } ?? 0 }
    var openConnections: Int { server.map { Int(cache_http_open_connections($0)) } ?? 0 }

    /// Stops accepting connections; those open go on until `stop`.
    func quiesce() {
        if let server { cache_http_quiesce(server) }
    }

    func stop() {
        if let server { cache_http_stop(server) }
        server = nil
    }

    deinit { stop() }

    private static func send(_ response: Response, on connection: OpaquePointer) -> Int32 {
        let headers = response.headers.map { "\($0.0): \($0.1)\n" }.joined()
        switch response.body {
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { cache_http_respond(connection, UInt32(response.status), headers, $0.baseAddress, $0.count) }
        case .stream(let next):
            let stream = Unmanaged.passRetained(Stream(next)).toOpaque()
            return cache_http_stream(connection, UInt32(response.status), headers, { context, _, buffer, size in
                Unmanaged<Stream>.fromOpaque(context!).takeUnretainedValue().fill(buffer!, size)
            }, stream, { context in
                Unmanaged<Stream>.fromOpaque(context!).release()
            })
        }
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
