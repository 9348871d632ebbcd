import FoundationEssentials

/// The option of every kind that keeps records (see `SourceOption`): the key that finds a record.
extension SourceOption {
    /// `--key`: The field or fields (comma separated; dot paths such as user.id, but for csv each name is one column) whose values identify a record.
    public static let key = Source.Option(
        "key", "fields",
        help: "the field or fields (comma separated; dot paths such as user.id, but for csv each name is one column) whose values identify a record.",
        effects: [.abortsSync, .unconfirms, .rekeys], listed: { [("key", .string($0.layout?.keyDescription ?? ""))] },
        text: { $0.layout.map { [$0.keyDescription] } }, show: { $0.layout?.keyDescription ?? "-" }
    ) { source, given throws(SourceRules.Problem) in
        let text = given.value
        try refuseIndexes(text, "--key")
        let fields = JSONPath.fields(text)
        guard !fields.isEmpty, fields.allSatisfy({ $0 != nil && !$0!.keys.isEmpty }) else {
            throw invalid(text, "--key", "field names such as id, or user.id,repo")
        }
        source.layout?.key = fields.compactMap { $0 }
    }

    /// Paths follow object keys only: an index such as `[0]` is refused, not read as a name.
    static func refuseIndexes(_ text: String, _ option: String) throws(SourceRules.Problem) {
        if JSONPath.indexesAnArray(text) {
            throw invalid(text, option, "a path of object keys (paths do not index arrays: '[0]' would be read as part of a key's name; a key holding brackets is written quoted, such as $['a[0]'])")
        }
    }

    /// A kind that keeps records and was given no key.
    static func keyProblem(_ source: Source) -> SourceRules.Problem? {
        guard source.layout?.key.isEmpty == true else { return nil }
        return SourceRules.Problem(message: "A \(source.kind.rawValue) source needs '--key <fields>': the field or fields that identify a record.")
    }
}
