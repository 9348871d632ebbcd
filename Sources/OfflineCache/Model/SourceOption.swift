import FoundationEssentials

extension Source {
    /// One setting of a source, declared once: its flag and help, the kinds that take it (those
    /// whose definition lists it), its text form (read into a `Source` and written back from one),
    /// how `sources set` and `sources list --json` show it, and what a change of it does to the
    /// cached rows. The command line's parser, usage, help, completions and man page, `sources set`'s
    /// report, `sources list --json`, `sources export` and `apply`, the stored settings and
    /// `Source.Settings` all read these declarations; none names an option of its own.
    ///
    /// The options every kind takes are declared in `Kinds/SourceOptions.swift`; a kind's own in its
    /// folder (`--key` in `Kinds/Records/RecordOptions.swift`, `--next` in `Kinds/Records/JSONOptions.swift`).
    ///
    /// ```swift
    /// try cache.setSource(named: "repos", [.ttl: "30m", .maxDelete: "20%"])
    /// ```
    public struct Option: Sendable, Hashable, CustomStringConvertible {
        /// The long name without its dashes: `token-env`. The key of a sources file and of the stored settings.
        public let name: String
        /// The value's placeholder (`var` in `--token-env <var>`); nil for a switch such as `no-token`.
        package let placeholder: String?
        package let help: String
        /// When the option counts, for the kinds that take it: `with --next page`, `incremental`.
        package let qualifier: String
        /// Added to the help of `sources add` and of `sources set`.
        package let addingNote: String
        package let changingNote: String
        /// Given more than once, each value counts (`--header`); a sources file writes a list.
        package let repeatable: Bool
        /// The values a shell may offer.
        package let choices: [String]?
        /// Whether the value is a file path (for completions).
        package let isFile: Bool
        package let effects: Effects
        /// For a switch (`no-token`): the options it clears. A switch is for `sources set` only.
        package let clears: [String]
        /// Reads the option's text into the source being made.
        let apply: @Sendable (inout Source, Given) throws(SourceRules.Problem) -> Void
        /// The option's text as the source has it; nil at its default (left out of an export).
        package let text: @Sendable (Source) -> [String]?
        /// How `sources set` names and shows it in what it changed: `ttl 15m → 2h`. Nil: not shown.
        package let shown: (label: String, value: @Sendable (Source) -> String)?
        /// Its fields in `sources list --json` (`token_env`), in order.
        package let listed: @Sendable (Source) -> [(String, JSONValue)]

        /// What a change of an option does beyond the setting itself.
        package struct Effects: OptionSet, Sendable {
            package let rawValue: Int
            package init(rawValue: Int) { self.rawValue = rawValue }
            /// A sync begun before the change does not land (it fetched or wrote by the old value).
            package static let abortsSync = Effects(rawValue: 1)
            /// Nothing cached is confirmed any more: every row counts as stale until a sync confirms it.
            package static let unconfirms = Effects(rawValue: 2)
            /// The incremental watermark no longer measures the cursor: the next sync is full.
            package static let resetsWatermark = Effects(rawValue: 4)
            /// The cached records are keyed anew from their own fields.
            package static let rekeys = Effects(rawValue: 8)
        }

        /// An option's text as given, with every other option given beside it.
        struct Given {
            /// Its values: one, several for a repeatable option, none for a switch.
            var values: [String]
            /// Whether the text is new (given now, checked as the command line checks it) or was
            /// stored by this cache (a CA file since moved must not make a source unreadable).
            var isNew: Bool
            var value: String { values.last ?? "" }
        }

        init(_ name: String, _ placeholder: String?, help: String, qualifier: String = "", addingNote: String = "", changingNote: String = "",
             repeatable: Bool = false, choices: [String]? = nil, isFile: Bool = false, effects: Effects = [], clears: [String] = [],
             shown label: String? = nil, listed: @escaping @Sendable (Source) -> [(String, JSONValue)] = { _ in [] },
             text: @escaping @Sendable (Source) -> [String]?, show: (@Sendable (Source) -> String)? = nil,
             apply: @escaping @Sendable (inout Source, Given) throws(SourceRules.Problem) -> Void) {
            self.name = name
            self.placeholder = placeholder
            self.help = help
            self.qualifier = qualifier
            self.addingNote = addingNote
            self.changingNote = changingNote
            self.repeatable = repeatable
            self.choices = choices
            self.isFile = isFile
            self.effects = effects
            self.clears = clears
            self.apply = apply
            self.text = text
            self.shown = show.map { (label ?? name, $0) }
            self.listed = listed
        }

        /// A switch of `sources set` that clears options (`--no-token`).
        init(clearing name: String, help: String, clears: [String]) {
            self.init(name, nil, help: help, clears: clears, text: { _ in nil }, apply: { _, _ in })
        }

        /// `--token-env`, as messages and the command line write it.
        public var flag: String { "--" + name }

        /// `tokenEnv`: the option as a Swift program names it (`Source.Option.tokenEnv`), its words
        /// joined, each after the first capitalised, and the acronyms (URL, ID, CA, OAuth) as Swift
        /// spells them.
        public var setting: String {
            let acronyms = ["url": "URL", "id": "ID", "ca": "CA", "oauth": "OAuth"]
            let words = name.split(separator: "-").map(String.init)
            return (words.first ?? "") + words.dropFirst().map { acronyms[$0] ?? $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        }
        public var description: String { flag }
        package var isSwitch: Bool { placeholder == nil }

        public static func == (lhs: Source.Option, rhs: Source.Option) -> Bool { lhs.name == rhs.name }
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        /// "Invalid value 'x' for '--ttl': expected …": the one wording of a refused value.
        static func invalid(_ value: String, _ option: String, _ expected: String) -> SourceRules.Problem {
            SourceRules.Problem(message: "Invalid value '\(value)' for '\(option)': expected \(expected).")
        }

        func invalid(_ value: String, _ expected: String) -> SourceRules.Problem { Self.invalid(value, flag, expected) }

        /// Durations as the messages show them.
        package static let durationExamples = "90, 90s, 15m, 2h, 1d or 1h30m"

        /// A duration option's seconds.
        static func duration(_ given: Given, _ option: String) throws(SourceRules.Problem) -> Int {
            guard let seconds = DurationText.seconds(given.value) else {
                throw invalid(given.value, option, "a duration such as \(durationExamples)")
            }
            return seconds
        }
    }
}

/// The engine's name for it; an app sees `Source.Option`.
package typealias SourceOption = Source.Option
