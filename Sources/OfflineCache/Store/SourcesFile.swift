import FoundationEssentials

/// The sources of a cache as one JSON document, for version control: `cache sources export`
/// writes it, `cache apply` makes a cache's sources match it.
///
/// ```json
/// {"sources": [{"name": "bank", "kind": "account", "url": "https://bank.example/account", "ttl": "1h", "token-env": "BANK_TOKEN"}]}
/// ```
///
/// Each key but `name` and `kind` is an option's long name without its dashes, each value as the
/// option takes it on the command line (a list for a repeatable option); options at their
/// defaults are left out. Only the names of environment variables are written, never their values.
package enum SourcesFile {
    /// The document for `sources`, sorted by name: the same sources give the same bytes.
    package static func export(_ sources: [Source]) -> String {
        let items: [JSONValue] = sources.sorted { $0.name < $1.name }.map { source in
            var settings = source.kind.settings(of: source)
            settings[.url] = .text(TemplateText.asWritten(source.url.absoluteString))
            return .object([("name", .string(source.name)), ("kind", .string(source.kind.rawValue))] + settings.jsonFields)
        }
        return JSONValue.object([("sources", .array(items))]).rendered(indent: "  ") + "\n"
    }

    /// A file that is not JSON (65), not a sources file (64), or not there to read (66).
    package enum Refusal: Error, Equatable, CustomStringConvertible {
        case notJSON(String)
        case invalid(String)
        case unreadable(String)
        package var description: String {
            // One sentence after `cache: `, as every error reads.
            let message = switch self {
            case .notJSON(let message), .invalid(let message), .unreadable(let message): message
            }
            return message.prefix(1).lowercased() + message.dropFirst()
        }
    }

    /// The sources a file describes, each checked as `sources add` checks it; the whole file is
    /// refused at its first mistake. It is read by the project's strict reader (`JSONValue.parse`):
    /// RFC 8259 and nothing more, and a name given twice, anywhere in it, is refused — other
    /// tools read the last of two, and a file they read differently is not one to act on.
    package static func sources(in data: Data, named file: String) throws(Refusal) -> [Source] {
        let expected = "expected {\"sources\": [{\"name\": …, \"kind\": …, \"url\": …}, …]} as 'cache sources export' writes it"
        let document: JSONValue
        do throws(JSONValue.Unreadable) {
            document = try JSONValue.parse(data)
        } catch where error.repeatedKey {
            throw .invalid("\(file): \(error.description); a sources file names each thing once (other tools would read the last, this one will not guess).")
        } catch {
            throw .notJSON("\(file) is not JSON (\(error.description)): \(expected).")
        }
        guard case .object(let top) = document, top.count == 1, top[0].0 == "sources", case .array(let entries) = top[0].1 else {
            throw .invalid("\(file) is not a sources file: expected one key, \"sources\", holding a list of objects, as 'cache sources export' writes it.")
        }
        var sources: [Source] = []
        var names: Set<String> = []
        for (index, entry) in entries.enumerated() {
            guard case .object(let pairs) = entry else { throw .invalid("\(file): source \(index + 1) is not an object.") }
            var fields = Dictionary(pairs.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            guard case .string(let name)? = fields.removeValue(forKey: "name") else {
                throw .invalid("\(file): source \(index + 1) has no \"name\" (a string).")
            }
            let place = "source '\(name)' of \(file)"
            guard case .string(let kindText)? = fields.removeValue(forKey: "kind") else { throw .invalid("\(place) has no \"kind\" (a string).") }
            guard let kind = SourceKind(rawValue: kindText) else {
                throw .invalid("Invalid kind '\(kindText)' in \(place): expected \(SourceKind.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            guard names.insert(name).inserted else { throw .invalid("\(file) has two sources named '\(name)'.") }
            do throws(SourceRules.Problem) {
                let settings = try SourceSettings(json: fields.mapValues(SourceSettings.JSONText.init), where: place)
                if let option = SourceOption.all.first(where: { !$0.clears.isEmpty && settings[$0] != nil }) {
                    throw SourceRules.Problem(message: "Unknown key '\(option.name)' in \(place): a sources file describes a source whole; leave an option out for its default.")
                }
                sources.append(try settings.newSource(name: name, kind: kind))
            } catch {
                let message = error.message
                throw .invalid(message.contains(place) ? message : "\(place): " + message.prefix(1).lowercased() + message.dropFirst())
            }
        }
        return sources
    }

    /// What `apply` does to one source.
    package struct Step: Sendable, Equatable {
        package enum Action: String, Sendable, CaseIterable { case create, change, unchanged, keep, remove }
        package var source: String
        package var action: Action
        /// Each option that changes, by name, shown before and after as `sources set` shows it
        /// (headers by name: a value may be a secret).
        package var changes: [(option: String, before: String, after: String)]
        /// What a removal takes with it.
        package var gone: SourceStore.Belongings?
        /// The source as the file has it (create, change).
        var wanted: Source?

        package static func == (lhs: Step, rhs: Step) -> Bool {
            lhs.source == rhs.source && lhs.action == rhs.action && lhs.gone == rhs.gone
                && lhs.changes.map { [$0.option, $0.before, $0.after] } == rhs.changes.map { [$0.option, $0.before, $0.after] }
        }
    }

    /// The steps that make `existing` match `wanted`, sorted by source name. A source in both
    /// of another kind is refused: a kind cannot change.
    package static func plan(_ wanted: [Source], existing: [Source], prune: Bool,
                             belongings: (String) throws -> SourceStore.Belongings) throws -> [Step] {
        // By name: a file of 100,000 sources plans in linear time.
        let current = Dictionary(existing.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let inFile = Set(wanted.map(\.name))
        var steps: [Step] = []
        for source in wanted {
            guard let current = current[source.name] else {
                steps.append(Step(source: source.name, action: .create, changes: [], wanted: source))
                continue
            }
            guard current.kind == source.kind else {
                throw Refusal.invalid("'\(source.name)' is \(current.kind.rawValue) in the cache and \(source.kind.rawValue) in the file: a source's kind cannot change; remove it ('cache sources remove') and apply again.")
            }
            let changes = current.kind.options.compactMap { option -> (String, String, String)? in
                guard let shown = option.shown, option.text(current) != option.text(source) else { return nil }
                return (option.name, shown.value(current), shown.value(source))
            }
            steps.append(Step(source: source.name, action: changes.isEmpty ? .unchanged : .change, changes: changes, wanted: source))
        }
        for source in existing where !inFile.contains(source.name) {
            steps.append(Step(source: source.name, action: prune ? .remove : .keep, changes: [],
                              gone: prune ? try belongings(source.name) : nil))
        }
        return steps.sorted { $0.source < $1.source }
    }
}

extension SourceStore {
    /// Makes the steps, all in one transaction: the sources match the file, or nothing changed.
    /// A removal's belongings are counted again inside it.
    package func apply(_ steps: [SourcesFile.Step]) throws(CacheError) -> [SourcesFile.Step] {
        do {
            return try SearchIndex(db: db).mendingDamagedPages { try db.inTransaction {
                try steps.map { step in
                    var step = step
                    switch step.action {
                    case .create: try inserting(step.wanted!)
                    case .change:
                        let wanted = step.wanted!
                        _ = try updating(step.source) { source in
                            let identity = source.identity
                            source = wanted
                            source.identity = identity
                        }
                    case .remove: step.gone = try removing(step.source)
                    case .unchanged, .keep: break
                    }
                    return step
                }
            } }
        } catch {
            throw Self.cacheError(error)
        }
    }
}
