import FoundationEssentials

/// The Official Joke API's jokes: an array of jokes, or one. Responses are random samples
/// (`merge`): a joke absent from one is not gone.
struct JokesKind: KindDefinition {
    var defaultMode: SyncMode { .merge }
    var summary: String { "(Official Joke API)" }
    var storage: RowStorage { .jokes }
    var options: [SourceOption] { [] }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        let body = bodies[0]
        bodies[0] = Data()  // freed once decoded, before the reconcile's memory is taken
        return try PayloadDecoder.decode(body, shape: .jokes, deadline: deadline)
    }
}
