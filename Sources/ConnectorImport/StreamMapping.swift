import FoundationEssentials
import OfflineCache

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
        try authenticate(requester["authenticator"] ?? .null, requester, &headers, &query, &options, &interpolation)

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

    /// A query's part percent-encoded as URIs are (`percentEncoded`), leaving `${NAME}` for the
    /// sync to fill, and `,` and `:`, which a query carries as they are.
    static func encoded(_ text: String) -> String {
        text.percentEncoded { String.isUnreserved($0) || "${},:".utf8.contains($0) }
    }
}
