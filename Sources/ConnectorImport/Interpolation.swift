import FoundationEssentials

/// The Jinja a manifest writes in its strings, read as far as cache can: a user's setting
/// (`{{ config['x'] }}`, `{{ config.x }}`) becomes the variable `${X}` the sync fills, and a
/// parameter handed down (`{{ parameters['path'] }}`) its value. Anything else is refused.
struct Interpolation {
    var parameters: YAMLNode?
    /// The spec's defaults, by setting: what a part that cannot be a variable is read as.
    var defaults: [String: String] = [:]
    /// The settings the spec marks `airbyte_secret`: their defaults are never copied.
    var secrets: Set<String> = []
    /// The settings read, in order.
    var used: [String] = []
    /// What was read at import rather than left to a variable, in a sentence each.
    var notes: [String] = []

    init(parameters: YAMLNode?, defaults: [String: String] = [:], secrets: Set<String> = []) {
        (self.parameters, self.defaults, self.secrets) = (parameters, defaults, secrets)
    }

    /// `template` with its settings as their spec defaults: for a value cache needs when the
    /// source is added (a page size, the start of a URL). A URL that names its scheme keeps
    /// its settings as variables (`https://${SUBDOMAIN}.example.com`); one that a setting
    /// starts must take the setting's default.
    mutating func literal(_ template: String, _ component: String, isURL: Bool = false) throws(Refusal) -> String {
        let filled = try text(template, component)
        if isURL, filled.hasPrefix("https://") || filled.hasPrefix("http://") { return filled }
        // One pass: a default is put in as it is, never read again for variables.
        var out = "", rest = Substring(filled)
        while let start = rest.firstRange(of: "${"), let end = rest[start.upperBound...].firstIndex(of: "}") {
            out += rest[..<start.lowerBound]
            let variable = String(rest[start.upperBound..<end])
            guard let setting = defaults.keys.sorted().first(where: { Self.variable($0) == variable }), let value = defaults[setting] else {
                throw Refusal(component: component, reason: "it is the setting \(variable), which has no default in the spec; cache needs the value in the file")
            }
            guard !secrets.contains(setting) else {
                throw Refusal(component: component, reason: "it is the secret setting \(variable), whose default is not copied into the file")
            }
            out += value
            used.removeAll { Self.variable($0) == variable }
            notes.append("\(component): the setting \(setting) read as its default, \(value)")
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    mutating func text(_ template: String, _ component: String) throws(Refusal) -> String {
        guard !template.contains("{%") else { throw Refusal(component: component, reason: "Jinja statements ({% … %}) are not read") }
        var out = "", rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { throw Refusal(component: component, reason: "an unclosed {{ in '\(template)'") }
            let expression = rest[open.upperBound..<close.lowerBound].trimmingSpaces()
            if let choice = try choose(expression, component) {
                out += choice
            } else if let (setting, fallback) = Self.setting(expression) {
                let name = setting.joined(separator: ".")
                if !used.contains(name) { used.append(name) }
                // `config.get('x', 'literal')` or `config['x'] or 'literal'`: the literal is the
                // setting's default where the spec gives none.
                if let fallback, defaults[name] == nil { defaults[name] = fallback }
                out += "${\(Self.variable(setting.joined(separator: "_")))}"
            } else if let parameter = Self.parts(expression, in: "parameters") ?? Self.parts(expression, in: "options"), parameter.count == 1 {
                // A parameter no component gave reads as empty text, as Jinja's undefined does.
                out += parameters?[parameter[0]]?.string ?? ""
            } else {
                throw Refusal(component: component, reason: "{{ \(expression) }}: Jinja beyond reading a setting (config) or a parameter is not read")
            }
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// `'a' if config['x'] == 'v' else 'b'` (or `!=`, or the setting alone as the condition):
    /// a choice between literals on a setting, made now by the setting's spec default and
    /// named in the report; nil for any other expression.
    mutating func choose(_ expression: String, _ component: String) throws(Refusal) -> String? {
        guard let ifRange = expression.firstRange(of: " if "), let elseRange = expression.firstRange(of: " else "),
              ifRange.upperBound <= elseRange.lowerBound,
              let chosen = Self.literal(expression[..<ifRange.lowerBound]), let otherwise = Self.literal(expression[elseRange.upperBound...])
        else { return nil }
        let condition = expression[ifRange.upperBound..<elseRange.lowerBound].trimmingSpaces()
        var reference = condition, compared: String?, equal = true
        for operation in ["==", "!="] {
            if let range = condition.firstRange(of: operation) {
                guard let value = Self.literal(condition[range.upperBound...]) else { return nil }
                (reference, compared, equal) = (condition[..<range.lowerBound].trimmingSpaces(), value, operation == "==")
            }
        }
        guard let setting = Self.parts(reference, in: "config") else { return nil }
        let name = setting.joined(separator: ".")
        guard let value = defaults[name] else {
            throw Refusal(component: component, reason: "{{ \(expression) }} chooses by the setting \(name), which has no default to choose by")
        }
        guard !secrets.contains(name) else {
            throw Refusal(component: component, reason: "{{ \(expression) }} chooses by the secret setting \(name), whose default is not read")
        }
        let holds = compared.map { (value == $0) == equal } ?? !(value.isEmpty || value == "false")
        let result = holds ? chosen : otherwise
        notes.append("\(component): '\(result)', chosen by the setting \(name)'s default (\(value))")
        return result
    }

    /// The expression without the spaces between its tokens; those inside quotes stay.
    static func unspaced(_ expression: String) -> String {
        var out = "", quote: Character?
        for character in expression {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == " " || character == "\t" {
                continue
            }
            out.append(character)
        }
        return out
    }

    /// A quoted literal's text.
    static func literal(_ text: Substring) -> String? {
        let trimmed = text.trimmingSpaces()
        guard trimmed.count >= 2, let quote = trimmed.first, quote == "'" || quote == "\"", trimmed.last == quote else { return nil }
        return String(trimmed.dropFirst().dropLast())
    }

    /// The variable a setting is read from: its name in capitals, other characters `_`.
    static func variable(_ setting: String) -> String {
        let name = String(setting.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        return name.first?.isNumber == true ? "_" + name : name
    }

    /// `${NAME}` alone: the name.
    static func onlyVariable(_ text: String) -> String? {
        guard text.hasPrefix("${"), text.hasSuffix("}"), !text.dropFirst(2).dropLast().contains("$") else { return nil }
        return String(text.dropFirst(2).dropLast())
    }

    /// The expression inside `{{ … }}`, when that is the whole text.
    static func expression(_ text: String) -> String? {
        guard text.hasPrefix("{{"), text.hasSuffix("}}") else { return nil }
        let inner = text.dropFirst(2).dropLast(2)
        guard !inner.contains("{{") else { return nil }
        return inner.trimmingSpaces()
    }

    /// `root.a.b`, `root['a']['b']` or `root.get('a')` as a path `$.a.b`; nil for anything else.
    static func path(_ expression: String, in root: String) -> String? {
        parts(expression, in: root).map { "$" + $0.map { StreamMapping.isIdentifier($0) ? "." + $0 : "['\($0)']" }.joined() }
    }

    /// A setting read with a literal to fall back on, Jinja's two ways: `config.get('x', 'y')`
    /// and `config['x'] or 'y'` (and the setting alone, without one).
    static func setting(_ expression: String) -> (parts: [String], fallback: String?)? {
        var fallback: String?
        var reference = expression
        if let or = expression.firstRange(of: " or ") {
            guard let literal = literal(expression[or.upperBound...]) else { return nil }
            fallback = literal
            reference = String(expression[..<or.lowerBound])
        }
        guard let parts = parts(reference, in: "config", fallback: &fallback) else { return nil }
        return (parts, fallback)
    }

    /// The names `root.a.b`, `root['a']['b']` or `root.get('a')` reads; nil for anything else.
    static func parts(_ expression: String, in root: String) -> [String]? {
        var fallback: String?
        return parts(expression, in: root, fallback: &fallback)
    }

    /// The same, with the literal of a `.get('a', 'literal')` in `fallback`.
    static func parts(_ expression: String, in root: String, fallback: inout String?) -> [String]? {
        var rest = Substring(Self.unspaced(expression))
        guard rest.hasPrefix(root) else { return nil }
        rest = rest.dropFirst(root.count)
        var parts: [String] = []
        while !rest.isEmpty {
            if rest.hasPrefix(".get(") || rest.hasPrefix("['") || rest.hasPrefix("[\"") {
                let opening = rest.hasPrefix(".get(") ? 6 : 2
                let quote = rest.dropFirst(opening - 1).first
                guard quote == "'" || quote == "\"" else { return nil }
                let body = rest.dropFirst(opening)
                guard let end = body.firstIndex(of: quote!) else { return nil }
                parts.append(String(body[..<end]))
                rest = body[body.index(after: end)...]
                if opening == 6, rest.first == ",", let quote = rest.dropFirst().first, quote == "'" || quote == "\"" {
                    // .get('a', 'literal')
                    let literal = rest.dropFirst(2)
                    guard let close = literal.firstIndex(of: quote) else { return nil }
                    fallback = String(literal[..<close])
                    rest = literal[literal.index(after: close)...]
                }
                guard rest.first == (opening == 6 ? ")" : "]") else { return nil }
                rest = rest.dropFirst()
            } else if rest.first == "." {
                let body = rest.dropFirst()
                let end = body.firstIndex { !($0.isLetter || $0.isNumber || $0 == "_") } ?? body.endIndex
                guard end > body.startIndex else { return nil }
                parts.append(String(body[..<end]))
                rest = body[end...]
            } else {
                return nil
            }
        }
        return parts.isEmpty ? nil : parts
    }
}
