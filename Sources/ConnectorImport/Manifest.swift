import FoundationEssentials

/// An Airbyte declarative manifest (`type: DeclarativeSource`) read as the CDK reads it:
/// `$ref`s (and the older `*ref(a.b)`) resolved against the document, a referenced mapping's
/// keys overridden by the referring one's, and `$parameters` handed down to the components
/// below, filling the fields they leave out.
package struct Manifest {
    package var streams: [YAMLNode]
    /// The user's settings: `spec.connection_specification.properties`, by name, in order.
    package var settings: [(name: String, property: YAMLNode)]

    package init(_ document: YAMLNode) throws(YAMLError) {
        guard document.entries != nil else { throw YAMLError(message: "not a DeclarativeSource: the document is not a mapping") }
        if let type = document["type"]?.string, type != "DeclarativeSource" {
            throw YAMLError(message: "not a DeclarativeSource: its type is \(type)")
        }
        guard let listed = document["streams"]?.items else {
            throw YAMLError(message: "not a DeclarativeSource: it has no list of streams")
        }
        var resolver = Resolver(root: document)
        var budget = YAML.maxNodes
        streams = try listed.map { stream throws(YAMLError) in try Self.handDown(resolver.resolve(stream), parameters: [], budget: &budget) }
        let properties = try resolver.resolve(document["spec"]?["connection_specification"]?["properties"] ?? .map([]))
        settings = properties.entries?.map { ($0.key, $0.value) } ?? []
    }

    /// The keys whose values are components, which parameters reach when they have no `type`.
    static let componentKeys: Set<String> = [
        "retriever", "requester", "record_selector", "extractor", "paginator", "pagination_strategy",
        "authenticator", "incremental_sync", "page_token_option", "page_size_option", "start_time_option",
        "end_time_option", "error_handler", "partition_router", "schema_loader", "decoder",
    ]

    /// `$parameters` down the tree, as the CDK's component transformer does: each component's
    /// own win over those handed to it, and a field a component leaves out takes the parameter
    /// of that name. What it copies counts against `budget` (parameters copied into every
    /// component below grow as aliases do, and are bounded as they are).
    static func handDown(_ node: YAMLNode, parameters: [(key: String, value: YAMLNode)], isComponent: Bool = true,
                         budget: inout Int) throws(YAMLError) -> YAMLNode {
        switch node {
        case .map(var entries):
            var merged = parameters
            // `$options` is the older name of `$parameters` (CDK versions before 0.30).
            let own = (node["$options"]?.entries ?? []) + (node["$parameters"]?.entries ?? [])
            if !own.isEmpty {
                let replaced = Set(own.map(\.key))
                merged = merged.filter { !replaced.contains($0.key) } + own
            }
            budget -= 1 + (isComponent ? 2 * merged.count : 0)
            guard budget >= 0 else { throw YAMLError(message: "the manifest's parameters, handed down, expand past \(YAML.maxNodes) nodes; refused") }
            if isComponent {
                let present = Set(entries.map(\.key))
                for (key, value) in merged where !present.contains(key) { entries.append((key, value)) }
                entries.removeAll { $0.key == "$parameters" || $0.key == "$options" }
                entries.append(("$parameters", .map(merged)))
            }
            var result: [(key: String, value: YAMLNode)] = []
            for entry in entries {
                let child = entry.value["type"] != nil || componentKeys.contains(entry.key)
                result.append((entry.key, entry.key == "$parameters" ? entry.value
                               : try handDown(entry.value, parameters: merged, isComponent: child, budget: &budget)))
            }
            return .map(result)
        case .list(let items):
            var result: [YAMLNode] = []
            for item in items { result.append(try handDown(item, parameters: parameters, isComponent: item["type"] != nil, budget: &budget)) }
            return .list(result)
        default:
            budget -= 1
            guard budget >= 0 else { throw YAMLError(message: "the manifest's parameters, handed down, expand past \(YAML.maxNodes) nodes; refused") }
            return node
        }
    }

    /// Resolves references, detecting loops.
    struct Resolver {
        var root: YAMLNode
        var resolving: [String] = []
        /// Nodes made so far: references that repeat references grow as aliases do, and are
        /// bounded as they are.
        var made = 0

        mutating func resolve(_ node: YAMLNode) throws(YAMLError) -> YAMLNode {
            made += 1
            guard made <= YAML.maxNodes else {
                throw YAMLError(message: "the manifest's references expand past \(YAML.maxNodes) nodes; refused")
            }
            switch node {
            case .map(let entries):
                var result: [(key: String, value: YAMLNode)] = []
                if let reference = node["$ref"]?.string {
                    let referenced = try target(reference)
                    // A reference to a value that is not a mapping is that value (with no keys beside it).
                    guard let keys = referenced.entries else {
                        guard entries.count == 1 else { throw YAMLError(message: "the reference \(reference) is not to a mapping, yet keys are given beside it") }
                        return referenced
                    }
                    result = keys
                }
                // The referring mapping's keys override the referenced ones, in place.
                var index: [String: Int] = [:]
                for (position, entry) in result.enumerated() { index[entry.key] = position }
                for (key, value) in entries where key != "$ref" {
                    let resolved = try resolve(value)
                    if let position = index[key] { result[position].value = resolved } else {
                        index[key] = result.count
                        result.append((key, resolved))
                    }
                }
                return .map(result)
            case .list(let items):
                var resolved: [YAMLNode] = []
                for item in items { resolved.append(try resolve(item)) }
                return .list(resolved)
            case .string(let text) where text.hasPrefix("#/") || (text.hasPrefix("*ref(") && text.hasSuffix(")")):
                // A string that is a reference, as the CDK reads one (`- "#/definitions/users"`).
                return try target(text)
            default:
                return node
            }
        }

        /// What `#/definitions/a/b` points at, itself resolved.
        mutating func target(_ given: String) throws(YAMLError) -> YAMLNode {
            // The older form, `*ref(definitions.users)`, is the same reference by dots.
            let reference = given.hasPrefix("*ref(") && given.hasSuffix(")")
                ? "#/" + given.dropFirst(5).dropLast().split(separator: ".").joined(separator: "/") : given
            guard reference.hasPrefix("#/") else {
                throw YAMLError(message: "the reference \(reference) is not to this file (#/…); only references within the manifest are read")
            }
            guard resolving.count < YAML.maxDepth else {
                throw YAMLError(message: "references refer through more than \(YAML.maxDepth) others (from \(resolving.first ?? reference)); refused")
            }
            guard !resolving.contains(reference) else {
                throw YAMLError(message: "the reference \(reference) refers to itself (\((resolving + [reference]).joined(separator: " → ")))")
            }
            var node = root
            for part in reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
                let key = String(part).replacing("~1", with: "/").replacing("~0", with: "~")
                if let items = node.items, let index = Int(key), items.indices.contains(index) {
                    node = items[index]
                } else if let next = node[key] {
                    node = next
                } else {
                    throw YAMLError(message: "the reference \(reference) points nowhere: no '\(key)'")
                }
            }
            resolving.append(reference)
            defer { resolving.removeLast() }
            return try resolve(node)
        }
    }
}
