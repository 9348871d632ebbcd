import YAMLShim

/// A YAML document as data: what a connector manifest says, with aliases expanded.
package indirect enum YAMLNode: Sendable {
    case null
    case bool(Bool)
    /// A number, as its text (written into JSON as it is).
    case number(String)
    case string(String)
    case list([YAMLNode])
    /// Keys in the document's order.
    case map([(key: String, value: YAMLNode)])

    package subscript(_ key: String) -> YAMLNode? {
        guard case .map(let entries) = self else { return nil }
        return entries.last { $0.key == key }?.value
    }

    package var string: String? {
        switch self {
        case .string(let text), .number(let text): text
        case .bool(let value): value ? "true" : "false"
        default: nil
        }
    }

    package var entries: [(key: String, value: YAMLNode)]? {
        if case .map(let entries) = self { entries } else { nil }
    }

    package var items: [YAMLNode]? {
        if case .list(let items) = self { items } else { nil }
    }
}

/// Why a file could not be read as YAML.
package struct YAMLError: Error, CustomStringConvertible, Equatable {
    package var message: String
    package var description: String { message }
}

/// Reads YAML through libyaml (loaded by the first read, so no other command pays for it).
package enum YAML {
    /// Larger files are refused before they are parsed: the largest manifest in Airbyte's
    /// catalogue is a few hundred KiB.
    package static let maxBytes = 16 << 20
    /// Aliases may repeat a node; past this many nodes in all, the file is refused (an alias
    /// bomb — "billion laughs" — expands to more than memory holds).
    package static let maxNodes = 1_000_000
    /// Deeper nesting is refused as it is read: libyaml slows with depth, and the nodes are
    /// walked by recursion (a manifest nests a dozen levels or so).
    package static let maxDepth = 200

    /// The first document of `bytes`.
    package static func parse(_ bytes: [UInt8]) throws(YAMLError) -> YAMLNode {
        guard bytes.count <= maxBytes else {
            throw YAMLError(message: "the file is \(bytes.count) bytes; a manifest is at most \(maxBytes >> 20) MiB")
        }
        if let failure = cache_yaml_load() { throw YAMLError(message: String(cString: failure)) }
        var reader = Reader()
        let result: Result<YAMLNode, YAMLError> = bytes.withUnsafeBufferPointer { buffer in
            guard let parser = cache_yaml_parser(buffer.baseAddress, buffer.count) else {
                return .failure(YAMLError(message: "libyaml could not start a parser"))
            }
            defer { cache_yaml_free(parser) }
            do throws(YAMLError) {
                return .success(try reader.read(parser))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Builds nodes from libyaml's events.
    private struct Reader {
        /// Containers being read, innermost last.
        var open: [Partial] = []
        var anchors: [String: (node: YAMLNode, size: Int)] = [:]
        var nodes = 0

        /// A list or a mapping being read, and the anchor it defines.
        struct Partial {
            var isMap: Bool
            var anchor: String?
            var items: [YAMLNode] = []
            var entries: [(key: String, value: YAMLNode)] = []
            /// A mapping's key whose value comes next.
            var key: String?
            /// Its nodes, itself included.
            var size = 1
        }

        mutating func read(_ parser: UnsafeMutableRawPointer) throws(YAMLError) -> YAMLNode {
            var event = cache_yaml_event()
            var document: YAMLNode?
            while true {
                guard cache_yaml_next(parser, &event) == 1 else {
                    var line = 0, column = 0
                    let problem = String(cString: cache_yaml_problem(parser, &line, &column))
                    throw YAMLError(message: "not YAML: \(problem) at line \(line + 1), column \(column + 1)")
                }
                let kind = Int(event.kind)
                switch kind {
                case Int(CACHE_YAML_STREAM_END.rawValue):
                    guard let document else { throw YAMLError(message: "the file holds no YAML document") }
                    return document
                case Int(CACHE_YAML_DOCUMENT_END.rawValue):
                    // The first document is the manifest.
                    if document != nil { return document! }
                case Int(CACHE_YAML_SCALAR.rawValue):
                    let text = String(decoding: UnsafeBufferPointer(start: event.value, count: event.length), as: UTF8.self)
                    let tag = event.tag.map { String(cString: $0) }
                    let node = event.plain != 0 && tag == nil ? Self.plain(text) : .string(text)
                    try add(node, size: 1, anchor: event.anchor.map { String(cString: $0) }, into: &document)
                case Int(CACHE_YAML_ALIAS.rawValue):
                    let name = String(cString: event.anchor)
                    guard let target = anchors[name] else { throw YAMLError(message: "the alias *\(name) names no anchor") }
                    try add(target.node, size: target.size, anchor: nil, into: &document)
                case Int(CACHE_YAML_SEQUENCE_START.rawValue), Int(CACHE_YAML_MAPPING_START.rawValue):
                    guard open.count < YAML.maxDepth else {
                        throw YAMLError(message: "the document nests deeper than \(YAML.maxDepth) levels (line \(event.line + 1)); refused")
                    }
                    open.append(Partial(isMap: kind == Int(CACHE_YAML_MAPPING_START.rawValue), anchor: event.anchor.map { String(cString: $0) }))
                case Int(CACHE_YAML_SEQUENCE_END.rawValue), Int(CACHE_YAML_MAPPING_END.rawValue):
                    let partial = open.removeLast()
                    // Its nodes were counted as they were read: added below at its size, not again.
                    nodes -= partial.size - 1
                    try add(partial.isMap ? .map(partial.entries) : .list(partial.items), size: partial.size, anchor: partial.anchor, into: &document)
                default:
                    break
                }
            }
        }

        /// Puts a finished node where it goes: into the open container, or as the document.
        mutating func add(_ node: YAMLNode, size: Int, anchor: String?, into document: inout YAMLNode?) throws(YAMLError) {
            nodes += size
            guard nodes <= YAML.maxNodes else {
                throw YAMLError(message: "the document expands past \(YAML.maxNodes) nodes (aliases repeating aliases?); refused")
            }
            if let anchor { anchors[anchor] = (node, size) }
            guard let last = open.indices.last else {
                document = node
                return
            }
            open[last].size += size
            guard open[last].isMap else {
                open[last].items.append(node)
                return
            }
            guard let key = open[last].key else {
                guard let key = node.string ?? (node.isNull ? "null" : nil) else {
                    throw YAMLError(message: "a mapping key that is not text; a manifest's keys are names")
                }
                open[last].key = key
                return
            }
            open[last].key = nil
            if key == "<<", node.entries != nil || node.items?.allSatisfy({ $0.entries != nil }) == true {
                // A YAML merge key (one mapping, or a list of them, the first winning): the
                // mapping's own keys win over the merged ones.
                var seen = Set(open[last].entries.map(\.key))
                for merged in node.entries.map({ [$0] }) ?? node.items!.compactMap(\.entries) {
                    for entry in merged where seen.insert(entry.key).inserted { open[last].entries.append(entry) }
                }
            } else {
                open[last].entries.append((key, node))
            }
        }

        /// A plain scalar's type, as YAML's core schema reads it.
        static func plain(_ text: String) -> YAMLNode {
            switch text {
            case "", "~", "null", "Null", "NULL": return .null
            case "true", "True", "TRUE": return .bool(true)
            case "false", "False", "FALSE": return .bool(false)
            default: break
            }
            if isNumber(text) { return .number(text) }
            return .string(text)
        }

        /// A decimal integer or float as JSON writes it (a leading + aside).
        static func isNumber(_ text: String) -> Bool {
            var bytes = Substring(text).utf8[...]
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard let first = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            var seenDot = false, seenExponent = false, previous: UInt8 = 0
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): break
                case UInt8(ascii: ".") where !seenDot && !seenExponent: seenDot = true
                case UInt8(ascii: "e"), UInt8(ascii: "E"): if seenExponent { return false }; seenExponent = true
                case UInt8(ascii: "-"), UInt8(ascii: "+"): if previous != UInt8(ascii: "e") && previous != UInt8(ascii: "E") { return false }
                default: return false
                }
                previous = byte
            }
            // A leading zero is an octal in YAML 1.1 and not JSON: text.
            if bytes.count > 1, bytes.first == UInt8(ascii: "0"), bytes.dropFirst().first != UInt8(ascii: ".") { return false }
            return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(previous)
        }
    }
}

extension YAMLNode {
    var isNull: Bool { if case .null = self { true } else { false } }
}
