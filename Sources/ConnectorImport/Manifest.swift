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
        streams = try listed.map { stream throws(YAMLError) in try Self.handDown(resolver.resolve(stream), parameters: []) }
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
    /// of that name.
    static func handDown(_ node: YAMLNode, parameters: [(key: String, value: YAMLNode)], isComponent: Bool = true) -> YAMLNode {
        switch node {
        case .map(var entries):
            var merged = parameters
            // `$options` is the older name of `$parameters` (CDK versions before 0.30).
            for (key, value) in (node["$options"]?.entries ?? []) + (node["$parameters"]?.entries ?? []) {
                merged.removeAll { $0.key == key }
                merged.append((key, value))
            }
            if isComponent {
                for (key, value) in merged where !entries.contains(where: { $0.key == key }) { entries.append((key, value)) }
                entries.removeAll { $0.key == "$parameters" || $0.key == "$options" }
                entries.append(("$parameters", .map(merged)))
            }
            return .map(entries.map { entry in
                let child = entry.value["type"] != nil || componentKeys.contains(entry.key)
                return (entry.key, entry.key == "$parameters" ? entry.value : handDown(entry.value, parameters: merged, isComponent: child))
            })
        case .list(let items):
            return .list(items.map { handDown($0, parameters: parameters, isComponent: $0["type"] != nil) })
        default:
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
                    result = try target(reference).entries ?? []
                }
                for (key, value) in entries where key != "$ref" {
                    let resolved = try resolve(value)
                    result.removeAll { $0.key == key }
                    result.append((key, resolved))
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
