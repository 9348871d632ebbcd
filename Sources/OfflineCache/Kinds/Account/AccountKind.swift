import FoundationEssentials

/// An account: a name, a balance and its transactions, in a `{status, message, body}` envelope.
/// Each response is the whole account (`replace`).
struct AccountKind: KindDefinition {
    var defaultMode: SyncMode { .replace }
    var summary: String { "({status, message, body} envelope)" }
    var storage: RowStorage { .account }
    var options: [SourceOption] { [] }

    func payload(_ bodies: inout [Data], layout: RecordLayout?, deadline: DecodeDeadline) throws(UpstreamError) -> Payload {
        let body = bodies[0]
        bodies[0] = Data()  // freed once decoded, before the reconcile's memory is taken
        // The one copy, so the decoder gives its transactions back as it reads them: the body and
        // the decoded rows are never both held whole.
        return try PayloadDecoder.decode(body, shape: .account, deadline: deadline, release: .pages)
    }
}
