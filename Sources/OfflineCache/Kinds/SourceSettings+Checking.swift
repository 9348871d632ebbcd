import FoundationEssentials

/// Settings made into sources, as `cache sources add` and `set` (and `apply`, and apps) check them.
extension SourceSettings {
    /// A new source of `kind` with these settings: `cache sources add`.
    package func newSource(name: String, kind: SourceKind) throws(SourceRules.Problem) -> Source {
        if let problem = SourceRules.nameProblem(name) { throw SourceRules.Problem(message: problem) }
        try refuseOthers(for: kind, adding: true)
        return try kind.source(named: name, self, new: Set(given.keys))
    }

    /// `source` with these settings changed: `cache sources set`. Only the options given are
    /// checked as new; the rest are as stored.
    package func changing(_ source: Source) throws(SourceRules.Problem) -> Source {
        if given.isEmpty { throw SourceRules.Problem(message: Self.nothingToChange) }
        try refuseOthers(for: source.kind, adding: false, name: source.name)
        let kind = source.kind
        var changed = try kind.source(named: source.name, kind.changed(kind.settings(of: source), by: self, before: source),
                                      new: Set(given.keys))
        changed.identity = source.identity
        return changed
    }

    /// Each value checked on its own, as the command line checks it before it opens the cache.
    package func checkedAlone() throws(SourceRules.Problem) {
        if given.isEmpty { throw SourceRules.Problem(message: Self.nothingToChange) }
        for option in SourceOption.all where option.clears.isEmpty {
            guard let values = given[option.name], let kind = option.kinds.first else { continue }
            var scratch = Source(name: "x", kind: kind, url: URL(string: "about:blank")!,
                                 layout: RecordLayout(key: []))
            try option.apply(&scratch, SourceOption.Given(values: values, isNew: true))
        }
    }

    /// Refuses an option no kind takes, one `kind` does not take, and (adding) a switch that clears.
    private func refuseOthers(for kind: SourceKind, adding: Bool, name: String = "") throws(SourceRules.Problem) {
        for text in given.keys.sorted() {
            guard let option = SourceOption.named(text) else {
                throw SourceRules.Problem(message: "Unknown option '--\(text)'.")
            }
            if adding, !option.clears.isEmpty {
                throw SourceRules.Problem(message: "'\(option.flag)' changes a source: it is for 'cache sources set'.")
            }
            guard kind.options.contains(option) else {
                let kinds = option.kinds.map(\.rawValue)
                let taking = kinds.count < 2 ? kinds.joined() : kinds.dropLast().joined(separator: ", ") + " and " + kinds.last!
                throw SourceRules.Problem(message: "'\(option.flag)' is for \(taking) sources" + (adding ? "." : "; '\(name)' is \(kind.rawValue)."))
            }
        }
    }
}
