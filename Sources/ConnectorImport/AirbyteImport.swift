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
