import FoundationEssentials

/// A JSON value as the generic decoder reads it. Numbers are kept as canonical text: an integer
/// as written, any other number as the shortest text of its double (`1.50` and `1.5` are the
/// same number, so are `2.0` and `2`, `262.06999999999999` and `262.07`).
indirect enum JSONNode {
    case null, bool(Bool), number(String), string(String), array([JSONNode])
    /// Keys in the order the response has them (a repeated key: the first wins).
    case object(keys: [String], values: [JSONNode])

    var isScalar: Bool {
        switch self {
        case .bool, .number, .string: true
        default: false
        }
    }

    /// What a key field may hold.
    var isKey: Bool {
        switch self {
        case .number, .string: true
        default: false
        }
    }

    /// The value at a path of object keys, if there is one.
    func at(_ path: JSONPath) -> JSONNode? {
        var node = self
        for key in path.keys {
            guard case .object(let keys, let values) = node, let index = keys.firstIndex(of: key) else { return nil }
            node = values[index]
        }
        return node
    }

    /// Canonical JSON: object keys sorted by their UTF-8 bytes, no whitespace.
    func write(into out: inout [UInt8]) {
        switch self {
        case .null: JSONBytes.literal("null", into: &out)
        case .bool(let value): JSONBytes.literal(value ? "true" : "false", into: &out)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): JSONBytes.string(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let keys, let values):
            out.append(UInt8(ascii: "{"))
            let order = keys.indices.sorted { keys[$0].utf8.lexicographicallyPrecedes(keys[$1].utf8) }
            for (position, index) in order.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.string(keys[index], into: &out)
                out.append(UInt8(ascii: ":"))
                values[index].write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    var canonical: String {
        var out: [UInt8] = []
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A record's key from its key fields' values: a string as it is, a number as canonical
    /// text, several values as a canonical JSON array (`[7,"a"]`).
    static func recordKey(_ parts: [JSONNode]) -> String {
        if parts.count == 1, case .string(let text) = parts[0] { return text }
        return parts.count == 1 ? parts[0].canonical : JSONNode.array(parts).canonical
    }

}
