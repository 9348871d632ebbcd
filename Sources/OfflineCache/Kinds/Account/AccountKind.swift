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
        return try PayloadDecoder.decode(body, shape: .account, deadline: deadline)
    }
}
