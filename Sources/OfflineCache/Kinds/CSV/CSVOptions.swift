import FoundationEssentials

/// A csv source's own option (see `SourceOption`): the character between fields.
extension SourceOption {
    /// `--delimiter`: The character between fields (default: ,); tab for tabs.
    public static let delimiter = Source.Option(
        "delimiter", "c", help: "the character between fields (default: ,); tab for tabs.",
        effects: [.abortsSync, .unconfirms],
        listed: { [("delimiter", .string(RecordLayout.delimiterText($0.layout?.delimiter ?? UInt8(ascii: ","))))] },
        text: { $0.layout?.delimiter.flatMap { $0 == UInt8(ascii: ",") ? nil : [RecordLayout.delimiterText($0)] } },
        show: { RecordLayout.delimiterText($0.layout?.delimiter ?? UInt8(ascii: ",")) }
    ) { source, given throws(SourceRules.Problem) in
        guard let byte = RecordLayout.delimiter(given.value) else {
            throw invalid(given.value, "--delimiter", "one character such as , ; | or tab (not a quote)")
        }
        source.layout?.delimiter = byte
    }
}
