import FoundationEssentials

extension Source {
    /// A source's settings as text, keyed by option, the way `cache sources add` and `set` take them
    /// and a sources file holds them: one set of checks, with the same messages, for the command line,
    /// a sources file and apps. An option not given is left at its default (adding) or as it is
    /// (setting). A refusal through `Cache` names the setting (`.ttl`); on the command line, the
    /// option (`--ttl`).
    ///
    /// ```swift
    /// try cache.addSource(name: "repos", kind: .json, url: "https://api.example.com/repos",
    ///                     [.ttl: "1h", .header: ["Accept: application/json"], .key: "id", .next: "link"])
    /// try cache.setSource(named: "repos", [.ttl: "30m", .maxDelete: "20%", .noToken: true])
    /// ```
    public struct Settings: Sendable, Equatable, ExpressibleByDictionaryLiteral {
        /// Each option given, by name: its one value, each value of a repeatable option, none for a switch.
        package var given: [String: [String]] = [:]

        /// No settings: every option at its default (adding) or unchanged (setting).
        public init() {}

        public init(dictionaryLiteral elements: (Source.Option, Value)...) {
            for (option, value) in elements { self[option] = value }
        }

        /// An option's value: text as the command line takes it (`"1h"`), or typed — a duration
        /// (`.duration(.seconds(3600))`) or a count (`.count(10)`, or `10`), checked as the same
        /// text; for a repeatable option a list (`[]` for none); `true` for a switch.
        public enum Value: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByBooleanLiteral,
                           ExpressibleByIntegerLiteral {
            /// The option's text, as `cache sources add` takes it.
            case text(String)
            /// A repeatable option's values.
            case list([String])
            /// A switch, given.
            case on
            /// A duration option (`ttl`, `alertAfter`, `lag`, `fullEvery`), to the second.
            case duration(Duration)
            /// A count option (`maxPages`, `maxDelete`'s rows, `maxBytes`).
            case count(Int)

            public init(stringLiteral value: String) { self = .text(value) }
            public init(arrayLiteral elements: String...) { self = .list(elements) }
            /// `true` gives a switch; `false` leaves it out, as if not written.
            public init(booleanLiteral value: Bool) { self = value ? .on : .list([]) }
            /// `10` gives a count.
            public init(integerLiteral value: Int) { self = .count(value) }

            package var values: [String] {
                switch self {
                case .text(let text): [text]
                case .list(let texts): texts
                case .on: []
                // Whole seconds, as the command line writes them (a part of a second is refused there too).
                case .duration(let duration): [duration.components.attoseconds == 0 ? String(duration.components.seconds) : "\(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)"]
                case .count(let count): [String(count)]
                }
            }
        }

        /// The option's text as given, or nil when it is not.
        public subscript(option: Source.Option) -> Value? {
            get {
                guard let values = given[option.name] else { return nil }
                return option.isSwitch ? .on : option.repeatable ? .list(values) : .text(values.last ?? "")
            }
            set {
                // A switch set to false is a switch not given.
                if option.isSwitch, newValue == .list([]) { given[option.name] = nil; return }
                given[option.name] = newValue?.values
            }
        }

        /// No option given.
        public var isEmpty: Bool { given.isEmpty }

        /// A change that changes nothing, refused as a mistake.
        package static let nothingToChange = "Nothing to change: give at least one option, such as --ttl or --url."
    }
}

/// The engine's name for it; an app sees `Source.Settings`.
package typealias SourceSettings = Source.Settings
