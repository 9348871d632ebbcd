import FoundationEssentials

/// Any JSON API: records found and keyed by the source's `RecordLayout`, over as many pages as
/// it links (see `SyncEngine.fetchPages`).
struct JSONKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var storage: RowStorage { .records }
    var layoutOptions: [String] { ["--rows", "--key", "--next", "--next-param", "--first-page", "--has-more", "--max-pages",
                                        "--since-param", "--cursor-field", "--lag", "--full-every", "--no-incremental"] }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        guard let layout else { throw .badData("a json source needs a layout (--key)") }
        return .records(try RecordTables.set(&bodies) { body, page throws(UpstreamError) in
            try RecordDecoder.decode(body, layout: layout, page: page, deadline: deadline)
        })
    }
}
