import FoundationEssentials

/// Newline-delimited JSON (JSON Lines, ndjson): one record per line, each a JSON object, blank
/// lines skipped; keyed by `--key` and kept as records, like a json source's, so views, nested
/// data, search and history read them as they read those.
struct NDJSONKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var summary: String { "(JSON Lines: one record per line: give --key)" }
    var storage: RowStorage { .records }
    /// JSON Lines goes by two names; anything else is still read line by line.
    var accept: String { "application/x-ndjson, application/jsonl, */*;q=0.5" }
    var options: [SourceOption] { [.key] + SourceOption.writing }

    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? { SourceOption.keyProblem(source) }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        guard let layout else { throw .badData("an ndjson source needs a layout (--key)") }
        return .records(try RecordTables.set(&bodies) { body, page throws(UpstreamError) in
            try RecordDecoder.decode(body, layout: layout, page: page, deadline: deadline, release: .pages, lines: true)
        })
    }
}
