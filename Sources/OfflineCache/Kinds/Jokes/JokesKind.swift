import FoundationEssentials

/// The Official Joke API's jokes: an array of jokes, or one. Responses are random samples
/// (`merge`): a joke absent from one is not gone.
struct JokesKind: KindDefinition {
    var defaultMode: SyncMode { .merge }
    var storage: RowStorage { .jokes }
    var layoutOptions: [String] { [] }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        try PayloadDecoder.decode(bodies[0], shape: .jokes, deadline: deadline)
    }

    static var views: [ViewDefinition] {
        [
            ViewDefinition("cached_jokes", reads: ["jokes", "sources", "sync_state"], """
                SELECT id, type, setup, punchline, source, \(ViewDefinition.staleness)
                FROM (SELECT j.id, j.type, j.setup, j.punchline, j.source, s.ttl_s,
                             max(j.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
                      FROM jokes j
                      JOIN sources s ON s.name = j.source
                      LEFT JOIN sync_state st ON st.source = j.source)
                """),
        ]
    }
}
