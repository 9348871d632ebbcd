import FoundationEssentials
import OfflineCache

/// The routes in the order they are tried, and what is derived from them: which one a request
/// is for, 404 and 405 (with `Allow`), `GET /`'s list and `/openapi.json`.
struct RouteTable: Sendable {
    let routes: [Route]
    /// `/openapi.json`'s answer, made once: the table never changes while the server runs.
    private let openAPIBody: [UInt8]
    var openAPI: HTTPResponse { HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: .bytes(openAPIBody)) }

    init(_ routes: [Route]) {
        self.routes = routes
        openAPIBody = HTTPResponse.json(200, OpenAPI.document(routes)).bytes
    }

    /// The route a request is for, with its path parameters; nil when no route has the path.
    /// A path some route has with another method is a 405 naming the methods it takes.
    func route(for request: HTTPRequest) throws -> (route: Route, parameters: [String: String])? {
        var allowed: [String] = []
        guard let parts = Route.parts(of: request.path) else { return nil }
        for route in routes {
            guard let parameters = route.match(parts) else { continue }
            if route.takes(request.method) { return (route, parameters) }
            allowed += route.methods.filter { !allowed.contains($0) }
        }
        guard allowed.isEmpty else {
            throw Refusal(status: 405, message: "\(request.method) is not a method \(request.path) takes; it takes \(allowed.filter { $0 != "HEAD" }.joined(separator: " and "))",
                          headers: [("Allow", allowed.joined(separator: ", "))])
        }
        return nil
    }

    /// What a request was matched to: a route and its parameters, no route (404), or a route's
    /// path with another method (405).
    struct Match {
        let result: Result<(route: Route, parameters: [String: String])?, any Error>
        var route: Route? { (try? result.get())??.route }
    }

    func match(_ request: HTTPRequest) -> Match {
        Match(result: Result { try route(for: request) })
    }

    /// The route's answer, or the refusal its error carries.
    func dispatch(_ request: HTTPRequest, _ match: Match, on server: CacheServer) -> HTTPResponse {
        do {
            guard let (route, parameters) = try match.result.get() else {
                throw Refusal(status: 404, message: "no route \(request.path); see GET / for the routes")
            }
            var request = request
            request.parameters = parameters
            return try route.handler(server, request)
        } catch {
            return Self.response(for: error)
        }
    }

    /// An error as its answer: each kind of error says its own status (a refusal, a missing
    /// source, a bad filter, a busy file); anything else is the server's fault, 500.
    static func response(for error: any Error) -> HTTPResponse {
        switch error {
        case let refusal as Refusal:
            return .error(refusal.status, refusal.message, headers: refusal.headers)
        case let error as CacheError:
            switch error {
            case .noSuchSource, .noSuchRow, .noSuchRun: return .error(404, error.description)
            case .noDatabase: return .error(503, error.description, headers: [("Retry-After", "60")])
            case .database(let database) where database.isBusy: return .error(503, "the cache is busy; try again", headers: [("Retry-After", "1")])
            default: return .error(500, error.description)
            }
        case let error as RowPageError:
            return .error(400, error.message)
        case let error as SearchQueryError:
            return .error(400, "the query is not one FTS5 can read (\(error.message)); quote words holding punctuation as \"phrases\"")
        case let error as DatabaseError where error.isBusy:
            return .error(503, "the cache is busy; try again", headers: [("Retry-After", "1")])
        default:
            return .error(500, "\(error)")
        }
    }

    /// `GET /` to a client that is not a browser: every route, as the table has it.
    var index: JSONValue {
        .object([
            ("routes", .array(routes.map { .string($0.id) })),
            ("openapi", .string("/openapi.json")),
        ])
    }
}
