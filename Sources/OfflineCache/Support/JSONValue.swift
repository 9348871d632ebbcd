/// JSON written by hand so that keys keep the order the README shows and numbers print exactly.
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// Text that is already JSON, written as it is.
    case raw(String)

    package static func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    package static func optional(_ value: Int?) -> JSONValue { value.map { .int($0) } ?? .null }

    /// The value as compact JSON text, on one line.
    package var compact: String {
        var text = ""
        write(to: &text)
        return text
    }

    package func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += JSONValue.number(value)
        case .string(let value): JSONValue.quote(value, into: &out)
        case .raw(let json): out += json
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += ", " }
                JSONValue.quote(key, into: &out)
                out += ": "
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Top-level arrays put one element on a line, for people, `grep` and line-wise tools alike.
    package static let arraySeparator = ",\n "

    package static func lines(_ items: [JSONValue]) -> String {
        var out = "["
        for (index, item) in items.enumerated() {
            if index > 0 { out += arraySeparator }
            item.write(to: &out)
        }
        return out + "]\n"
    }

    package var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// The value as `text` writes it, or, given an indent, one member per line (an array of
    /// plain values stays on one line): the form of a file people keep under version control.
    package func rendered(indent: String? = nil, depth: Int = 0) -> String {
        guard let indent else { return text }
        let inner = String(repeating: indent, count: depth + 1), outer = String(repeating: indent, count: depth)
        switch self {
        case .object(let pairs) where !pairs.isEmpty:
            return "{\n" + pairs.map { key, value in
                var line = inner
                JSONValue.quote(key, into: &line)
                return line + ": " + value.rendered(indent: indent, depth: depth + 1)
            }.joined(separator: ",\n") + "\n" + outer + "}"
        case .array(let items) where items.contains(where: \.isContainer):
            return "[\n" + items.map { inner + $0.rendered(indent: indent, depth: depth + 1) }.joined(separator: ",\n") + "\n" + outer + "]"
        default:
            return text
        }
    }

    private var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }

    /// A number as records and keys store it (canonical JSON). Fixed since the first release:
    /// another spelling would make every stored record with such a number look changed.
    static func canonicalNumber(_ value: Double) -> String { number(value, wholeBelow: 1e15) }

    /// A number as output shows it (`list --json`, `export`, `sql`): whole numbers as integers
    /// while Int64 holds them exactly (9007199254740992, not 9007199254740992.0).
    package static func number(_ value: Double) -> String { number(value, wholeBelow: 9.2e18) }

    /// The shortest text that reads back as the same double: whole numbers below `bound` as
    /// integers, others in Swift's shortest form (1e+20).
    private static func number(_ value: Double, wholeBelow bound: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < bound { return String(Int64(value)) }
        return "\(value)"
    }

    package static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// RFC 4180 fields: quoted when they hold a comma, quote or line break.
package enum CSVText {
    package static func row(_ fields: [String]) -> String {
        fields.map { field in
            // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
            guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
            return "\"" + field.replacingScalars { $0 == "\"" ? "\"\"" : nil } + "\""
        }.joined(separator: ",") + "\n"
    }
}
