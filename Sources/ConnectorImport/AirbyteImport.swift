import FoundationEssentials
import OfflineCache

/// What `cache import airbyte` makes of a manifest: a source for each stream that maps, the
/// reason for each that does not, and the variables the sources read.
package struct AirbyteImport {
    /// One stream: its name as the manifest gives it, and the source it became or why not.
    package struct Stream {
        package var stream: String
        package var source: String?
        /// The source as a sources file holds it, for a mapped stream.
        package var definition: JSONValue?
        package var refused: String?
        /// What was decided at import (a setting read as its default).
        package var notes: [String] = []
    }

    /// A setting of the connector's spec that a source reads, as the variable it is read from.
    package struct Variable {
        package var name: String
        package var title: String?
        package var description: String?
        package var secret: Bool
    }

    package var streams: [Stream] = []
    package var variables: [Variable] = []

    /// The sources file of the mapped streams, as `cache apply` takes it.
    package var sourcesFile: JSONValue {
        .object([("sources", .array(streams.compactMap(\.definition)))])
    }

    /// The report as one JSON object (`--plan --json`).
    package var plan: JSONValue {
        .object([
            ("streams", .array(streams.map { .object([("stream", .string($0.stream)), ("source", .optional($0.source)), ("refused", .optional($0.refused))]) })),
            ("variables", .array(variables.map { .object([("name", .string($0.name)), ("title", .optional($0.title)), ("secret", .bool($0.secret))]) })),
        ])
    }

    /// Maps `manifest`'s streams (those named in `only`, when given), each source named
    /// `prefix` + the stream's name; `key` stands in for a stream without a primary key.
    package init(_ manifest: Manifest, only: [String]? = nil, prefix: String = "", key: String? = nil) {
        var used: [String] = []
        var taken = Set<String>()
        for (index, node) in manifest.streams.enumerated() {
            let name = Self.streamName(node, at: index)
            if let only, !only.contains(name) { continue }
            var mapping = StreamMapping(stream: node, settings: manifest.settings, key: key)
            defer { if !mapping.notes.isEmpty { streams[streams.count - 1].notes = mapping.notes } }
            // Two streams whose names clean to one source name ("a b", "a_b") get -2, -3, ...
            var source = Self.sourceName(prefix + name), number = 1
            while taken.contains(source) { number += 1; source = Self.sourceName(prefix + name) + "-\(number)" }
            taken.insert(source)
            do throws(Refusal) {
                let options = try mapping.options()
                streams.append(Stream(stream: name, source: source, definition: .object([("name", .string(source)), ("kind", .string("json"))] + options)))
                for variable in mapping.variables where !used.contains(variable) { used.append(variable) }
            } catch {
                streams.append(Stream(stream: name, refused: error.description))
            }
        }
        variables = used.map { setting in
            // A nested setting (config['credentials']['token']) is found through the spec's
            // nested properties.
            let parts = setting.split(separator: ".").map(String.init)
            let property = Self.property(parts, in: manifest.settings)
            let secret: Bool = if case .bool(true)? = property?["airbyte_secret"] { true } else { false }
            return Variable(name: Interpolation.variable(parts.joined(separator: "_")), title: property?["title"]?.string,
                            description: property?["description"]?.string, secret: secret)
        }
    }

    /// A setting's spec property by its path: through nested `properties`, and through the
    /// choices of a `oneOf` or `anyOf` (Airbyte's `credentials: {oneOf: [...]}`).
    static func property(_ path: [String], in settings: [(name: String, property: YAMLNode)]) -> YAMLNode? {
        guard let first = path.first, var node = settings.first(where: { $0.name == first })?.property else { return nil }
        for part in path.dropFirst() {
            let choices = [node] + (node["oneOf"]?.items ?? []) + (node["anyOf"]?.items ?? [])
            guard let next = choices.lazy.compactMap({ $0["properties"]?[part] }).first else { return nil }
            node = next
        }
        return node
    }

    /// A stream's name as the manifest gives it; one it gives none is named by its place.
    package static func streamName(_ stream: YAMLNode, at index: Int) -> String {
        stream["name"]?.string ?? "stream \(index + 1)"
    }

    /// A source name from a stream's: letters, digits, `-` and `_`, as `sources add` takes them.
    static func sourceName(_ name: String) -> String {
        let cleaned = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
        return cleaned.isEmpty ? "stream" : cleaned
    }
}

/// Why a stream does not map: the component, and what about it.
struct Refusal: Error, CustomStringConvertible {
    var component: String
    var reason: String
    var description: String { "\(component): \(reason)" }
}

/// One stream's components, read into a source's options.
struct StreamMapping {
    var stream: YAMLNode
    var settings: [(name: String, property: YAMLNode)]
    var key: String?
    /// The settings the options read, in order.
    var variables: [String] = []
    var notes: [String] = []

    init(stream: YAMLNode, settings: [(name: String, property: YAMLNode)], key: String?) {
        (self.stream, self.settings, self.key) = (stream, settings, key)
    }

    mutating func options() throws(Refusal) -> [(String, JSONValue)] {
        try refuseCustom(stream)
        let retriever = stream["retriever"] ?? .null
        let type = { (node: YAMLNode?) in node?["type"]?.string ?? "" }
        if type(retriever) == "AsyncRetriever" { throw Refusal(component: "AsyncRetriever", reason: "asynchronous jobs (create, poll, download) are not read") }
        if let router = retriever["partition_router"], !router.isNull, router.items?.isEmpty != true {
            let name = router.items?.first.map { type($0) } ?? type(router)
            throw Refusal(component: name.isEmpty ? "partition_router" : name, reason: "partitioned streams (a request per parent record or per listed value) are not read")
        }
        if let transformations = stream["transformations"]?.items, !transformations.isEmpty {
            throw Refusal(component: "transformations", reason: "\(transformations.map { type($0) }.joined(separator: ", ")) would change records after they are read")
        }
        let requester = retriever["requester"] ?? .null
        let method = requester["http_method"]?.string?.uppercased() ?? "GET"
        guard method == "GET" else { throw Refusal(component: "HttpRequester", reason: "http_method \(method): only GET requests are read") }
        for field in ["request_body_json", "request_body_data", "request_body"] where requester[field] != nil && requester[field]?.isNull == false {
            throw Refusal(component: "HttpRequester", reason: "\(field): a request with a body is not read")
        }
        var defaults: [String: String] = [:], secrets: Set<String> = []
        for (name, property) in settings {
            if let value = property["default"]?.string { defaults[name] = value }
            if case .bool(true)? = property["airbyte_secret"] { secrets.insert(name) }
        }
        var interpolation = Interpolation(parameters: requester["$parameters"], defaults: defaults, secrets: secrets)
        defer { (variables, notes) = (interpolation.used, interpolation.notes + notes) }

        // The URL: the base, the path, and the request's parameters.
        guard let base = requester["url_base"]?.string else { throw Refusal(component: "HttpRequester", reason: "it has no url_base") }
        var url = try interpolation.literal(base, "HttpRequester.url_base", isURL: true)
        if let path = requester["path"]?.string, !path.isEmpty {
            // As the CDK joins them: one slash between the base and the path.
            let text = try interpolation.text(path, "HttpRequester.path")
            url = String(url.reversed().drop { $0 == "/" }.reversed()) + "/" + text.drop { $0 == "/" }
        }
        var query: [(String, String)] = []
        for field in ["request_parameters", "request_headers"] {
            if let given = requester[field], !given.isNull, given.entries == nil {
                throw Refusal(component: "HttpRequester", reason: "\(field) as one Jinja expression, not a mapping of names to values, is not read")
            }
        }
        for (name, value) in requester["request_parameters"]?.entries ?? [] {
            guard let text = value.string else { throw Refusal(component: "HttpRequester", reason: "request_parameters.\(name) is not a single value") }
            query.append((name, try interpolation.text(text, "HttpRequester.request_parameters")))
        }
        var headers: [String] = []
        for (name, value) in requester["request_headers"]?.entries ?? [] {
            guard let text = value.string else { throw Refusal(component: "HttpRequester", reason: "request_headers.\(name) is not a single value") }
            headers.append("\(name): \(try interpolation.text(text, "HttpRequester.request_headers"))")
        }
        var options: [(String, JSONValue)] = []
        if let handler = requester["error_handler"], !handler.isNull {
            // cache has no per-source retry settings: what it does for every source is said.
            notes.append("error_handler not read: cache waits out 429s and rate limits (Retry-After, X-RateLimit-Reset) and backs off after failures, as for every source")
        }

        // Authentication. Each component's fields read its own parameters (handed down to it).
        let authenticator = requester["authenticator"] ?? .null
        interpolation.parameters = authenticator["$parameters"] ?? requester["$parameters"]
        switch type(authenticator) {
        case "", "NoAuth":
            break
        case "BearerAuthenticator":
            let token = try interpolation.text(authenticator["api_token"]?.string ?? "", "BearerAuthenticator.api_token")
            if let variable = Interpolation.onlyVariable(token) {
                options.append(("token-env", .string(variable)))
            } else {
                headers.append("Authorization: Bearer \(token)")
            }
        case "ApiKeyAuthenticator":
            let token = try interpolation.text(authenticator["api_token"]?.string ?? "", "ApiKeyAuthenticator.api_token")
            let option = authenticator["inject_into"]
            let field = option?["field_name"]?.string ?? authenticator["header"]?.string
            guard let field else { throw Refusal(component: "ApiKeyAuthenticator", reason: "it names no header or parameter to send the key in") }
            switch option?["inject_into"]?.string ?? "header" {
            case "header": headers.append("\(try interpolation.text(field, "ApiKeyAuthenticator")): \(token)")
            case "request_parameter": query.append((field, token))
            case let place: throw Refusal(component: "ApiKeyAuthenticator", reason: "a key sent in the \(place) is not read")
            }
        case "BasicHttpAuthenticator":
            // cache sends Basic from two variables: the user and the password must each be a setting.
            for (field, option) in [("username", "basic-user-env"), ("password", "basic-password-env")] {
                let text = try interpolation.text(authenticator[field]?.string ?? "", "BasicHttpAuthenticator.\(field)")
                // No password: an API key sent as the user name.
                if field == "password", text.isEmpty { continue }
                guard let variable = Interpolation.onlyVariable(text) else {
                    throw Refusal(component: "BasicHttpAuthenticator", reason: "its \(field) is not one setting ('\(text)'); cache reads each from a variable")
                }
                options.append((option, .string(variable)))
            }
        case "OAuthAuthenticator":
            if let updater = authenticator["refresh_token_updater"], !updater.isNull {
                throw Refusal(component: "OAuthAuthenticator", reason: "refresh_token_updater: a refresh token the endpoint replaces on each use would have to be written back, which cache does not do")
            }
            guard let endpoint = authenticator["token_refresh_endpoint"]?.string else {
                throw Refusal(component: "OAuthAuthenticator", reason: "it has no token_refresh_endpoint")
            }
            options.append(("oauth-token-url", .string(try interpolation.literal(endpoint, "OAuthAuthenticator.token_refresh_endpoint"))))
            // cache stores a token URL as it is: a setting in it must take its default.
            var fields = [("client_id", "client-id-env"), ("client_secret", "client-secret-env")]
            // The CDK's default grant is the refresh token's; cache asks with that or client credentials.
            let grant = authenticator["grant_type"]?.string ?? "refresh_token"
            guard grant == "refresh_token" || grant == "client_credentials" else {
                throw Refusal(component: "OAuthAuthenticator", reason: "grant_type '\(grant)': cache asks with refresh_token or client_credentials")
            }
            if grant == "refresh_token" { fields.append(("refresh_token", "refresh-token-env")) }
            // What cache reads of the answer is RFC 6749's: an answer in other fields cannot be read.
            for (field, standard) in [("access_token_name", "access_token"), ("expires_in_name", "expires_in")]
            where (authenticator[field]?.string ?? standard) != standard {
                throw Refusal(component: "OAuthAuthenticator", reason: "\(field) '\(authenticator[field]?.string ?? "")': cache reads the token endpoint's standard \(standard)")
            }
            for field in ["refresh_request_body", "refresh_request_headers", "token_expiry_date_format"] where authenticator[field].map({ !$0.isNull }) == true {
                throw Refusal(component: "OAuthAuthenticator", reason: "\(field): cache sends and reads the token request as RFC 6749 does, nothing more")
            }
            notes.append("OAuthAuthenticator: cache sends the client id and secret in HTTP Basic (RFC 6749 §2.3.1), where the CDK sends them in the form")
            for (field, option) in fields {
                let text = try interpolation.text(authenticator[field]?.string ?? "", "OAuthAuthenticator.\(field)")
                guard let variable = Interpolation.onlyVariable(text) else {
                    throw Refusal(component: "OAuthAuthenticator", reason: "its \(field) is not one setting ('\(text)'); cache reads each from a variable")
                }
                options.append((option, .string(variable)))
            }
            if let scopes = authenticator["scopes"]?.items?.compactMap(\.string), !scopes.isEmpty {
                options.append(("scope", .string(scopes.joined(separator: " "))))
            }
        case let other:
            throw Refusal(component: other, reason: "not mapped: cache reads the Bearer, API key, Basic and OAuth authenticators")
        }

        // Where the records are, and what identifies one.
        let selector = retriever["record_selector"] ?? .null
        if let filter = selector["record_filter"], !filter.isNull { throw Refusal(component: "RecordSelector", reason: "record_filter drops records by a Jinja condition") }
        let extractor = selector["extractor"] ?? .null
        interpolation.parameters = extractor["$parameters"] ?? selector["$parameters"] ?? requester["$parameters"]
        guard type(extractor).isEmpty || type(extractor) == "DpathExtractor" else { throw Refusal(component: type(extractor), reason: "only DpathExtractor is read") }
        var rows = "$"
        let path = extractor["field_path"]?.items ?? []
        for (index, part) in path.enumerated() {
            guard let text = part.string else { throw Refusal(component: "DpathExtractor", reason: "a field_path part that is not text") }
            let name = try interpolation.text(text, "DpathExtractor.field_path")
            if name == "*", index == path.count - 1 {
                // A last `*` over an array is that array's records; over an object (its values)
                // the sync says the path holds no array.
                notes.append("DpathExtractor.field_path: the last * read as the records of the array at \(rows)")
                break
            }
            guard name != "*", !name.contains("${") else { throw Refusal(component: "DpathExtractor", reason: "field_path '\(name)': a wildcard inside the path, or a setting in it, is not read") }
            rows += Self.isIdentifier(name) ? "." + name : "['\(name)']"
        }
        if rows != "$" { options.append(("rows", .string(rows))) }
        options.append(("key", .string(try primaryKey())))

        // Paging.
        try page(retriever["paginator"], &query, &options, &interpolation)

        // Incremental syncs.
        if let cursor = stream["incremental_sync"], !cursor.isNull {
            try incremental(cursor, &options, &interpolation)
        }

        if !query.isEmpty {
            url += (url.contains("?") ? "&" : "?") + query.map { "\(Self.encoded($0.0))=\(Self.encoded($0.1))" }.joined(separator: "&")
        }
        var result: [(String, JSONValue)] = [("url", .string(url))]
        if !headers.isEmpty { result.append(("header", .array(headers.map { .string($0) }))) }
        return result + options
    }

    /// `DatetimeBasedCursor` → an incremental sync: the start's request parameter is the
    /// watermark's, written in the cursor's `datetime_format`. cache's first sync is whole, and
    /// an end of now is no end.
    mutating func incremental(_ cursor: YAMLNode, _ options: inout [(String, JSONValue)], _ interpolation: inout Interpolation) throws(Refusal) {
        let type = cursor["type"]?.string ?? ""
        interpolation.parameters = cursor["$parameters"] ?? interpolation.parameters
        guard type == "DatetimeBasedCursor" else { throw Refusal(component: type.isEmpty ? "incremental_sync" : type, reason: "only DatetimeBasedCursor is read") }
        if cursor["end_time_option"].map({ $0.isNull }) ?? true,
           let until = cursor["end_datetime"]?["datetime"]?.string ?? cursor["end_datetime"]?.string,
           !until.contains("now_utc()"), !until.contains("today_utc()") {
            notes.append("DatetimeBasedCursor: end_datetime '\(until)' not read: no end is sent, and records after it are kept")
        }
        if let end = cursor["end_time_option"], !end.isNull {
            let until = cursor["end_datetime"]?["datetime"]?.string ?? cursor["end_datetime"]?.string ?? ""
            guard until.isEmpty || until.contains("now_utc()") || until.contains("today_utc()") else {
                throw Refusal(component: "DatetimeBasedCursor", reason: "end_datetime '\(until)': a fixed end is not read (an end of now is no end)")
            }
            notes.append("DatetimeBasedCursor: the end is now, so none is sent")
        }
        guard let start = cursor["start_time_option"], !start.isNull else {
            notes.append("DatetimeBasedCursor: no start_time_option, so each sync is whole (the CDK filters records by time instead)")
            return
        }
        guard start["inject_into"]?.string ?? "request_parameter" == "request_parameter", let field = start["field_name"]?.string else {
            throw Refusal(component: "DatetimeBasedCursor", reason: "start_time_option: only a request parameter is read")
        }
        guard let cursorField = cursor["cursor_field"]?.string else { throw Refusal(component: "DatetimeBasedCursor", reason: "it has no cursor_field") }
        options.append(("since-param", .string(try interpolation.text(field, "DatetimeBasedCursor.start_time_option"))))
        options.append(("cursor-field", .string(try interpolation.text(cursorField, "DatetimeBasedCursor.cursor_field"))))
        if let pattern = cursor["datetime_format"]?.string {
            guard TimeFormat(pattern) != nil else {
                throw Refusal(component: "DatetimeBasedCursor", reason: "datetime_format '\(pattern)': a directive cache does not write (it writes %Y %m %d %H %M %S %f %s %z %Z, or %ms alone)")
            }
            options.append(("since-format", .string(pattern)))
        }
        if let step = cursor["step"]?.string {
            notes.append("DatetimeBasedCursor: step \(step) not read: one request asks for everything since the watermark")
        }
    }

    /// `primary_key`: a field, fields, or paths (lists of names) → `key`.
    func primaryKey() throws(Refusal) -> String {
        let given = stream["primary_key"]
        var fields: [String] = []
        for item in given?.items ?? [given].compactMap({ $0 }) {
            if let name = item.string { fields.append(name) } else if let path = item.items?.compactMap(\.string), !path.isEmpty { fields.append(path.joined(separator: ".")) }
        }
        if fields.isEmpty, let key { return key }
        guard !fields.isEmpty else { throw Refusal(component: "primary_key", reason: "the stream has none: give --key FIELD to say what identifies a record") }
        return fields.joined(separator: ",")
    }

    /// `DefaultPaginator` → `next` and its parameters.
    mutating func page(_ paginator: YAMLNode?, _ query: inout [(String, String)], _ options: inout [(String, JSONValue)],
                       _ interpolation: inout Interpolation) throws(Refusal) {
        guard let paginator, !paginator.isNull, paginator["type"]?.string != "NoPagination" else { return }
        interpolation.parameters = paginator["$parameters"] ?? interpolation.parameters
        guard paginator["type"]?.string ?? "DefaultPaginator" == "DefaultPaginator" else {
            throw Refusal(component: paginator["type"]?.string ?? "paginator", reason: "only DefaultPaginator is read")
        }
        let strategy = paginator["pagination_strategy"] ?? .null
        let tokenOption = paginator["page_token_option"]
        let tokenPlace = tokenOption?["type"]?.string == "RequestPath" ? "path" : (tokenOption?["inject_into"]?.string ?? "request_parameter")
        guard tokenPlace == "path" || tokenPlace == "request_parameter" else {
            throw Refusal(component: "DefaultPaginator", reason: "a page token sent in the \(tokenPlace == "body_json" || tokenPlace == "body_data" ? "request body (paging through a POST body)" : tokenPlace) is not read")
        }
        let tokenField = tokenOption?["field_name"]?.string
        // A page size may be a setting: read as its default, which the URL then asks for.
        var size: String?
        if let text = strategy["page_size"]?.string { size = try interpolation.literal(text, "\(strategy["type"]?.string ?? "pagination_strategy").page_size") }
        if let size, let sizeOption = paginator["page_size_option"] {
            guard sizeOption["inject_into"]?.string ?? "request_parameter" == "request_parameter", let field = sizeOption["field_name"]?.string else {
                throw Refusal(component: "DefaultPaginator", reason: "page_size_option: only a request parameter is read")
            }
            query.append((field, size))
        }
        switch strategy["type"]?.string ?? "" {
        case "CursorPagination":
            let value = (strategy["cursor_value"]?.string ?? "").trimmed
            guard let expression = Interpolation.expression(value) else {
                throw Refusal(component: "CursorPagination", reason: "cursor_value '\(value)' is not one {{ … }} expression")
            }
            if let path = Interpolation.path(expression, in: "response") {
                options.append(("next", .string(path)))
                if tokenPlace == "request_parameter" {
                    guard let tokenField else { throw Refusal(component: "DefaultPaginator", reason: "page_token_option names no field_name") }
                    options.append(("next-param", .string(tokenField)))
                }
            } else if ["headers['link']['next']['url']", "headers.link.next.url", "headers[\"link\"][\"next\"][\"url\"]"].contains(expression.replacing(" ", with: "")) {
                options.append(("next", .string("link")))
            } else if let header = Interpolation.parts(expression, in: "headers"), header.count == 1 {
                // A cursor in a response header, sent as a request parameter.
                guard tokenPlace == "request_parameter", let tokenField else {
                    throw Refusal(component: "CursorPagination", reason: "a cursor from the \(header[0]) header must go in a request parameter (page_token_option.field_name)")
                }
                options += [("next", .string("header:\(header[0])")), ("next-param", .string(tokenField))]
            } else if let field = Interpolation.parts(expression, in: "last_record"), field.count == 1 {
                // The last record's key while a boolean says more follow (Stripe's style).
                guard field[0] == (try? primaryKey()) else {
                    throw Refusal(component: "CursorPagination", reason: "the cursor is the last record's \(field[0]), not its primary key, which cache sends")
                }
                let stop = Interpolation.expression(strategy["stop_condition"]?.string?.trimmed ?? "") ?? ""
                guard let more = Self.moreFlag(stop) else {
                    throw Refusal(component: "CursorPagination", reason: "a last_record cursor needs a stop_condition on a boolean of the response, such as {{ not response.has_more }}")
                }
                guard tokenPlace == "request_parameter", let tokenField else {
                    throw Refusal(component: "CursorPagination", reason: "the last record's key must go in a request parameter (page_token_option.field_name)")
                }
                options += [("next", .string("last-key")), ("next-param", .string(tokenField)), ("has-more", .string(more))]
            } else {
                throw Refusal(component: "CursorPagination", reason: "cursor_value {{ \(expression) }}: cache reads a next URL or cursor from the body, or the Link header")
            }
        case "OffsetIncrement", "PageIncrement":
            let offset = strategy["type"]?.string == "OffsetIncrement"
            guard tokenPlace == "request_parameter", let tokenField else {
                throw Refusal(component: strategy["type"]?.string ?? "", reason: "the offset or page number must go in a request parameter (page_token_option.field_name)")
            }
            options.append(("next", .string(offset ? "offset" : "page")))
            options.append(("next-param", .string(tokenField)))
            if let size {
                guard let number = Int(size), number > 0 else { throw Refusal(component: strategy["type"]?.string ?? "", reason: "page_size '\(size)' is not a number of records") }
                options.append(("page-size", .int(number)))
            }
            if !offset {
                // The CDK counts pages from 0 unless told otherwise.
                options.append(("first-page", .int(Int(strategy["start_from_page"]?.string ?? "0") ?? 0)))
            }
        case let other:
            throw Refusal(component: other.isEmpty ? "DefaultPaginator" : other, reason: "this pagination strategy is not read")
        }
    }

    /// The boolean a stop condition reads (`not response.has_more`, `response.has_more ==
    /// false`, `response['has_more'] is false`), as a path: more pages while it is true.
    static func moreFlag(_ condition: String) -> String? {
        var text = condition.replacing(" ", with: "")
        if text.hasPrefix("not") { text = String(text.dropFirst(3)) }
        else if text.hasSuffix("==false") { text = String(text.dropLast(7)) }
        else if text.hasSuffix("isfalse") { text = String(text.dropLast(7)) }
        else { return nil }
        return Interpolation.path(text, in: "response")
    }

    /// Refuses a stream with any `Custom…` component: Python code cache cannot run.
    func refuseCustom(_ node: YAMLNode) throws(Refusal) {
        if let type = node["type"]?.string, type.hasPrefix("Custom") {
            throw Refusal(component: type, reason: "a custom component is Python code (\(node["class_name"]?.string ?? "its class_name")), which cache does not run")
        }
        for child in node.items ?? node.entries?.map(\.value) ?? [] { try refuseCustom(child) }
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// A query's part percent-encoded, leaving `${NAME}` for the sync to fill.
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "$"), UInt8(ascii: "{"), UInt8(ascii: "}"),
                 UInt8(ascii: ","), UInt8(ascii: ":"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
