import FoundationEssentials

/// Settings as a JSON object, the form of the stored settings and of a source in a sources file:
/// `{"key": "id", "header": ["Accept: application/json"]}`, each key an option's name, each value
/// its text (a list for a repeatable option); keys in the order the options are declared.
extension SourceSettings {
    /// The settings as one JSON object, the same settings always as the same bytes.
    package func json(indent: String? = nil) -> String {
        JSONValue.object(jsonFields).rendered(indent: indent)
    }

    /// The fields of `json()`, for a document that puts more beside them.
    package var jsonFields: [(String, JSONValue)] {
        let known = SourceOption.all.filter { given[$0.name] != nil }
        let unknown = given.keys.filter { SourceOption.named($0) == nil }.sorted().compactMap(SourceOption.named)
        return (known + unknown).compactMap { option in
            guard let values = given[option.name] else { return nil }
            return (option.name, option.repeatable ? .array(values.map { .string($0) }) : option.isSwitch ? .bool(true) : .string(values.last ?? ""))
        }
    }

    /// Settings from one JSON object of option names; a value must be text, or a list of texts
    /// for a repeatable option. `where` says where the object is, for messages.
    package init(json fields: [String: JSONText], where place: String = "the settings") throws(SourceRules.Problem) {
        self.init()
        for name in fields.keys.sorted() {
            guard let option = SourceOption.named(name), !name.hasPrefix("-") else {
                throw SourceRules.Problem(message: "Unknown key '\(name)' in \(place): expected an option of 'cache sources add' without its dashes, such as \"ttl\" or \"token-env\".")
            }
            switch fields[name]! {
            case .text(let text) where !option.repeatable && !option.isSwitch: given[name] = [text]
            case .list(let texts) where option.repeatable: given[name] = texts
            case .text(let text) where option.repeatable: given[name] = [text]
            case .on where option.isSwitch: given[name] = []
            case .off where option.isSwitch: continue  // a switch left off: its default
            default:
                let expected = option.repeatable ? "a list of strings" : option.isSwitch ? "true or false" : "a string or a number, as the command line takes it"
                throw SourceRules.Problem(message: "Invalid value for '\(name)' in \(place): expected \(expected).")
            }
        }
    }

    /// The stored settings: a JSON object, as `json()` writes it.
    package init(json data: Data) throws {
        let fields = try JSONDecoder().decode([String: JSONText].self, from: data)
        try self.init(json: fields)
    }

    /// One value of a settings object: a string (or a number, as its text), a list of them, or
    /// a switch's `true` or `false`.
    package enum JSONText: Decodable, Sendable, Equatable {
        case text(String)
        case list([String])
        case on
        case off
        case other

        /// A value as the strict reader gives it: a number as the text it was written in, so
        /// `"max-pages": 10` is `--max-pages 10`.
        package init(_ value: JSONValue) {
            func text(_ value: JSONValue) -> String? {
                switch value {
                case .string(let text), .raw(let text): text
                case .int(let number): String(number)
                default: nil
                }
            }
            switch value {
            case .bool(let flag): self = flag ? .on : .off
            case .array(let items):
                let texts = items.compactMap(text)
                self = texts.count == items.count ? .list(texts) : .other
            default: self = text(value).map(Self.text) ?? .other
            }
        }

        package init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .text(text) }
            else if let texts = try? container.decode([String].self) { self = .list(texts) }
            else if let flag = try? container.decode(Bool.self) { self = flag ? .on : .off }
            else { self = .other }
        }
    }
}
