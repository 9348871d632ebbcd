import FoundationEssentials
import OfflineCache

/// One route, declared once: its method, its path pattern, what it takes and answers, and its
/// handler. The route table's dispatch, `GET /`'s list, 404 and 405 with `Allow`, and
/// `GET /openapi.json` are all derived from these declarations.
package struct Route: Sendable {
    package enum Method: String, Sendable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    /// A query parameter, as `/openapi.json` describes it.
    package struct Parameter: Sendable {
        package let name: String
        package let description: String
        /// The JSON Schema of its value (`{"type": "integer", "minimum": 1}`).
        package let schema: JSONValue

        package init(_ name: String, _ description: String, _ schema: JSONValue = .object([("type", .string("string"))])) {
            self.name = name
            self.description = description
            self.schema = schema
        }
    }

    /// An answer a route gives on success, as `/openapi.json` describes it.
    package struct Answer: Sendable {
        package let status: Int
        package let description: String
        /// Media type and the JSON Schema of its body (for JSON; a string for text types).
        package let content: [(type: String, schema: JSONValue)]
        /// Response headers it carries (name, description).
        package let headers: [String]

        package init(_ status: Int, _ description: String, _ content: [(type: String, schema: JSONValue)] = [], headers: [String] = []) {
            self.status = status
            self.description = description
            self.content = content
            self.headers = headers
        }
    }

    package typealias Handler = @Sendable (CacheServer, HTTPRequest) throws -> HTTPResponse

    package let method: Method
    /// `/sources/{name}/rows/{key}`: literal segments and parameters; `{key}` takes one segment
    /// or more (a key may hold `/`), every other parameter one.
    package let path: String
    package let summary: String
    package let query: [Parameter]
    package let answers: [Answer]
    /// Whether it changes anything (a refresh; writes): refused from a page of another origin.
    package var changes: Bool { method != .get }
    /// Served without the token (the live page, which holds no data and asks for the token).
    package let open: @Sendable (HTTPRequest) -> Bool
    package let handler: Handler

    package init(_ method: Method, _ path: String, _ summary: String, query: [Parameter] = [], answers: [Answer],
                 open: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }, handler: @escaping Handler) {
        self.method = method
        self.path = path
        segments = path.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        self.summary = summary
        self.query = query
        self.answers = answers
        self.open = open
        self.handler = handler
    }

    /// `GET /sources/{name}`: how the route is named in `GET /`, the metrics and the tests.
    package var id: String { "\(method.rawValue) \(path)" }

    /// The methods a request may use for it: GET's answers come for HEAD too (RFC 9110 §9.3.2).
    package var methods: [String] { method == .get ? ["GET", "HEAD"] : [method.rawValue] }

    /// Whether a request's method is one of `methods`.
    func takes(_ requestMethod: String) -> Bool {
        requestMethod == method.rawValue || (method == .get && requestMethod == "HEAD")
    }

    /// The path's parameters in order (`name`, `key`).
    package var pathParameters: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    enum Segment: Equatable, Sendable {
        case literal(String)
        case parameter(String)
    }

    /// The path's segments, read once from `path`.
    let segments: [Segment]

    /// A decoded path's parts, as `match` takes them; nil for one that does not start with `/`.
    static func parts(of path: String) -> [String]? {
        guard path.hasPrefix("/") else { return nil }
        return path == "/" ? [] : path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// The parameters when a path's `parts` are this route's, else nil.
    func match(_ parts: [String]) -> [String: String]? {
        guard segments.count <= parts.count else { return nil }  // every segment takes a part at least
        return Self.match(segments[...], parts[...])
    }

    /// Segment by segment; `{key}` takes as many parts as leave the rest a match (the fewest
    /// first, so `/rows/a/log` is the log of `a`, and `/rows/a/b` the row `a/b`).
    private static func match(_ segments: ArraySlice<Segment>, _ parts: ArraySlice<String>) -> [String: String]? {
        guard let segment = segments.first else { return parts.isEmpty ? [:] : nil }
        switch segment {
        case .literal(let text):
            guard parts.first == text else { return nil }
            return match(segments.dropFirst(), parts.dropFirst())
        case .parameter("key"):
            let rest = segments.dropFirst()
            let most = parts.count - rest.count
            guard most >= 1 else { return nil }
            for taken in 1...most {
                let key = parts.prefix(taken).joined(separator: "/")
                guard !key.isEmpty else { continue }
                if var found = match(rest, parts.dropFirst(taken)) {
                    found["key"] = key
                    return found
                }
            }
            return nil
        case .parameter(let name):
            guard let part = parts.first, !part.isEmpty, var found = match(segments.dropFirst(), parts.dropFirst()) else { return nil }
            found[name] = part
            return found
        }
    }
}

/// A request the server will not answer as asked: the status and the sentence. Every error a
/// route throws is one of these, or becomes one (`HTTPFailure`).
package struct Refusal: Error {
    package var status: Int
    package var message: String
    package var headers: [(name: String, value: String)] = []

    package init(status: Int, message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }
}
