import FoundationEssentials

/// Any JSON API: records found and keyed by the source's `RecordLayout`, over as many pages as
/// it links (see `SyncEngine.fetchPages`).
struct JSONKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var summary: String { "(any JSON API: give --key, and --rows where the records are not the response itself)" }
    var storage: RowStorage { .records }
    var options: [SourceOption] { SourceOption.json }

    func problem(_ source: Source, _ settings: SourceSettings) -> SourceRules.Problem? { SourceOption.jsonProblem(source, settings) }

    func change(_ settings: inout SourceSettings, given: SourceSettings, before: Source) {
        SourceOption.jsonChange(&settings, given: given, before: before)
    }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        guard let layout else { throw .badData("a json source needs a layout (--key)") }
        return .records(try RecordTables.set(&bodies) { body, page throws(UpstreamError) in
            // The page's one copy: its records are given back as they are read (see BodyRelease).
            try RecordDecoder.decode(body, layout: layout, page: page, deadline: deadline, release: .pages)
        })
    }
}
