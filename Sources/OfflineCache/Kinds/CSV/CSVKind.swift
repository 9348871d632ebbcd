import FoundationEssentials

/// A CSV table (open-data portals, a spreadsheet's "publish to the web", exports): the first row
/// names the columns, each later row is a record keyed by the `--key` columns. Kept as records,
/// like a json source's, so everything that reads records reads these.
struct CSVKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var summary: String { "(a table whose first row names the columns: give --key)" }
    var storage: RowStorage { .records }
    /// Some portals answer JSON unless CSV is asked for; anything else is still read as CSV.
    var accept: String { "text/csv, */*;q=0.5" }
    var options: [SourceOption] { [.key, .delimiter] + SourceOption.writing }

    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? { SourceOption.keyProblem(source) }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        guard let layout else { throw .badData("a csv source needs a layout (--key)") }
        return .records(try RecordTables.set(&bodies) { body, _ throws(UpstreamError) in
            try CSVDecoder.decode(body, layout: layout, deadline: deadline)
        })
    }

    /// A key field is a column's name, dots and all.
    func keyPaths(_ key: [JSONPath]) -> [JSONPath] { key.map { JSONPath([$0.dotted]) } }
}
