import FoundationEssentials
import OfflineCache

/// JSON Schemas of the answers, for `/openapi.json`.
enum Schema {
    static let string: JSONValue = .object([("type", .string("string"))])
    static let boolean: JSONValue = .object([("type", .string("boolean"))])
    static let text: JSONValue = .object([("type", .string("string"))])
    static func integer(minimum: Int? = nil, maximum: Int? = nil) -> JSONValue {
        .object([("type", .string("integer"))] + (minimum.map { [("minimum", JSONValue.int($0))] } ?? []) + (maximum.map { [("maximum", JSONValue.int($0))] } ?? []))
    }
    static func array(_ items: JSONValue) -> JSONValue { .object([("type", .string("array")), ("items", items)]) }
    /// An object with these properties, all required, and any others beside them.
    static func object(_ properties: KeyValuePairs<String, JSONValue>) -> JSONValue {
        var fields: [(String, JSONValue)] = [("type", .string("object"))]
        if !properties.isEmpty {
            fields.append(("properties", .object(properties.map { ($0.key, $0.value) })))
            fields.append(("required", .array(properties.map { .string($0.key) })))
        }
        return .object(fields)
    }
    static let nullableInteger: JSONValue = .object([("type", .array([.string("integer"), .string("null")]))])
    static let nullableString: JSONValue = .object([("type", .array([.string("string"), .string("null")]))])
    static let error = object(["error": string])
    static let status = object(["source": string, "kind": string, "ttl_s": integer(), "rows": integer(), "stale_rows": integer(),
                                "stale": boolean, "last_success_at": nullableString])
    static let health = object(["ok": boolean, "sources": array(object(["source": string, "ok": boolean, "max_age_s": integer()]))])
    /// One row, whatever the kind (`RowRecordBytes`).
    static let row = object(["key": nullableString, "seen_at": nullableString, "stale": boolean, "pending": boolean, "record": .object([])])
    /// A local edit, as the write routes and `GET /outbox` give it.
    static let edit = object(["id": string, "source": string, "key": string, "op": string, "state": string, "attempts": integer(),
                              "made_at": string, "answer_status": nullableInteger, "answer": nullableString])
    static let rows = object(["source": string, "stale": boolean, "refreshing": boolean, "rows": array(row), "next": nullableString])
}

/// The rows routes' query, shared by their declarations.
enum RowsQuery {
    static let streamParameters = [
        Route.Parameter("stale", "1 for only the stale rows", .object([("type", .string("string")), ("enum", .array(["1", "0", "true", "false"].map(JSONValue.string)))])),
        Route.Parameter("as_of", "A past moment: a time, or how long ago (2h)"),
        Route.Parameter("after", "The cursor a page's next link gives"),
    ]
    static let parameters = [
        Route.Parameter("limit", "Rows in the page, 1 to 1000 (100 by default)", Schema.integer(minimum: 1, maximum: CacheServer.largestLimit)),
        Route.Parameter("q", "A full-text query, as 'cache search' takes it"),
    ] + streamParameters

    static func answers(_ schema: JSONValue?, type: String = "application/json") -> [Route.Answer] {
        [Route.Answer(200, "The rows, with ETag, Cache-Control, Age, Last-Modified and Cache-Status", [(type, schema ?? Schema.text)],
                      headers: ["ETag", "Cache-Control", "Age", "Last-Modified", "Cache-Status"]),
         Route.Answer(304, "Unchanged since the copy the client holds")]
    }
}

/// `GET /openapi.json`: an OpenAPI 3.1 description of every route, made from the route table,
/// so no route can exist without its description.
enum OpenAPI {
    static func document(_ routes: [Route]) -> JSONValue {
        var paths: [(String, [(String, JSONValue)])] = []
        for route in routes {
            let operation = Self.operation(route)
            if let index = paths.firstIndex(where: { $0.0 == route.path }) {
                paths[index].1.append((route.method.rawValue.lowercased(), operation))
            } else {
                paths.append((route.path, [(route.method.rawValue.lowercased(), operation)]))
            }
        }
        return .object([
            ("openapi", .string("3.1.0")),
            ("info", .object([("title", .string("cache serve")), ("version", .string("1")),
                              ("description", .string("A local SQLite copy of JSON APIs over HTTP: rows at once, each with an honest stale flag."))])),
            ("paths", .object(paths.map { ($0.0, .object($0.1)) })),
            ("components", .object([("securitySchemes", .object([("bearer", .object([("type", .string("http")), ("scheme", .string("bearer"))]))]))])),
        ])
    }

    static func operation(_ route: Route) -> JSONValue {
        var parameters: [JSONValue] = route.pathParameters.map { name in
            .object([("name", .string(name)), ("in", .string("path")), ("required", .bool(true)),
                     ("description", .string(name == "key" ? "The row's key (it may hold '/')" : "The source's name")), ("schema", Schema.string)])
        }
        parameters += route.query.map { parameter in
            .object([("name", .string(parameter.name)), ("in", .string("query")), ("required", .bool(false)),
                     ("description", .string(parameter.description)), ("schema", parameter.schema)])
        }
        if route.path == "/sources/{name}/rows" || route.path.hasPrefix("/sources/{name}/rows.") {
            parameters.append(.object([
                ("name", .string("filters")), ("in", .string("query")), ("required", .bool(false)),
                ("description", .string("COLUMN=OP.VALUE filters on the view's columns, in PostgREST's form")),
                ("style", .string("form")), ("explode", .bool(true)),
                ("schema", .object([("type", .string("object")), ("additionalProperties", Schema.string)])),
            ]))
        }
        var responses: [(String, JSONValue)] = route.answers.map { answer in
            var fields: [(String, JSONValue)] = [("description", .string(answer.description))]
            if !answer.content.isEmpty {
                fields.append(("content", .object(answer.content.map { ($0.type, .object([("schema", $0.schema)])) })))
            }
            if !answer.headers.isEmpty {
                fields.append(("headers", .object(answer.headers.map { ($0, .object([("schema", Schema.string)])) })))
            }
            return (String(answer.status), .object(fields))
        }
        responses.append(("default", .object([("description", .string("A refusal, saying which and why")),
                                               ("content", .object([("application/json", .object([("schema", Schema.error)]))]))])))
        return .object([
            ("operationId", .string(route.id.replacingScalars { $0.properties.isAlphabetic || ("0"..."9").contains($0) ? nil : "_" })),
            ("summary", .string(route.summary)),
            ("parameters", .array(parameters)),
            ("responses", .object(responses)),
        ])
    }
}
