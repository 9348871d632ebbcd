import FoundationEssentials
import OfflineCache

/// One request as the routes see it: a value built once per call from the connection (or by a
/// test), so that no route needs a socket.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The path, percent-decoded, without the query.
    package var path: String
    /// The target as the client sent it: the path and query before any decoding.
    package var target: String
    /// The query's arguments in order, decoded (a value is nil for a name without `=`); nil
    /// when one is not UTF-8 text.
    package var query: [(name: String, value: String?)]?
    /// Every header in order, duplicates too, names as sent.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// The client's address ("127.0.0.1").
    package var peer: String
    /// Whether the client has hung up: a stream waiting for something to send asks, so a
    /// connection nobody reads does not keep its thread.
    package var peerIsGone: @Sendable () -> Bool
    /// The route's path parameters (`name`, `key`), set by the route table.
    package var parameters: [String: String] = [:]

    package init(method: String, path: String, target: String? = nil, query: [(name: String, value: String?)]? = [],
                 headers: [(name: String, value: String)] = [], body: [UInt8] = [], peer: String = "127.0.0.1",
                 peerIsGone: @escaping @Sendable () -> Bool = { false }) {
        self.method = method
        self.path = path
        self.target = target ?? path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
        self.peerIsGone = peerIsGone
    }

    /// The first header named `name` (in any case), or nil.
    package func header(_ name: String) -> String? {
        headers.first { HTTPField.sameName($0.name, name) }?.value
    }

    /// Every header named `name` (in any case), in order.
    package func headers(named name: String) -> [String] {
        headers.filter { HTTPField.sameName($0.name, name) }.map(\.value)
    }

    /// A path parameter the route table matched.
    package func parameter(_ name: String) -> String { parameters[name] ?? "" }

    /// The query as written after `?`, or "" (for the access log).
    package var rawQuery: String {
        target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
    }
}

/// One answer: a status, headers (each handed to the library on its own), and a body whole or
/// made as it is sent.
package struct HTTPResponse {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: Body

    package enum Body {
        case bytes([UInt8])
        /// Made as it is sent: each call gives the next bytes, or nil at the end; it may block.
        /// A throw cuts the response short, so the client sees it incomplete, never whole.
        case stream(() throws -> [UInt8]?)
    }

    package init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first header named `name` (in any case), or nil.
    package func header(_ name: String) -> String? {
        headers.first { HTTPField.sameName($0.name, name) }?.value
    }

    /// The body when it is whole (empty for a stream).
    package var bytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }

    /// A JSON answer: the value and a newline.
    package static func json(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var text = ""
        value.write(to: &text)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: .bytes(Array((text + "\n").utf8)))
    }

    /// A refusal: `{"error": "…"}` with its status.
    package static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        json(status, .object([("error", .string(message))]), headers: headers)
    }
}

enum HTTPField {
    /// Whether two field names are the same, in any case (RFC 9110 §5.1), without making new
    /// strings: every request looks several up.
    static func sameName(_ a: String, _ b: String) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }
}
