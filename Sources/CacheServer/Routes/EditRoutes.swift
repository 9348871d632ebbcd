import FoundationEssentials
import OfflineCache

/// The write routes: a local edit queued over HTTP, as `cache edit` queues it (`OutboxStore`),
/// behind the token and the cross-site protection like every change. A client's own
/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header-06) is kept a day with its
/// request's fingerprint and first answer: a retry gets that answer (§2.6), the same key with
/// another request 422 (§2.7). A client's `If-Match` names the row's record as it read it
/// (its strong entity-tag, the `ETag` of every write's answer): another version is 412
/// (RFC 9110 §13.1.1). `Prefer: wait=N` sends the edit now and waits for the upstream's answer.
extension CacheServer {
    /// What a write route answers, as `/openapi.json` describes it.
    static let editAnswers = [
        Route.Answer(202, "Queued: the edit, shown at once, goes to the upstream with the next push", [("application/json", Schema.edit)],
                     headers: ["Location", "ETag"]),
        Route.Answer(200, "With Prefer: wait=N, the edit after the push (applied, conflict, rejected, or still queued)",
                     [("application/json", Schema.edit)], headers: ["Location", "ETag"]),
        Route.Answer(400, "Not one JSON object, an edit of the key, an Idempotency-Key that is not a quoted string", [("application/json", Schema.error)]),
        Route.Answer(404, "No such source or row", [("application/json", Schema.error)]),
        Route.Answer(409, "A read-only server", [("application/json", Schema.error)]),
        Route.Answer(412, "If-Match names another version of the row", [("application/json", Schema.error)]),
        Route.Answer(415, "A body that is not sent as JSON", [("application/json", Schema.error)]),
        Route.Answer(422, "The Idempotency-Key was used for another request", [("application/json", Schema.error)]),
    ]

    func edit(_ request: HTTPRequest, _ name: String, key: String?, _ operation: LocalEdit.Operation) throws -> HTTPResponse {
        guard !settings.readOnly else {
            _ = try withReader(of: name) { try SourceStore($0).named(name) }
            throw Refusal(status: 409, message: "this server is read-only (--read-only, CACHE_READ_ONLY or a Litestream replica): edit where the cache is written, its primary")
        }
        let body = String(decoding: request.body, as: UTF8.self)
        if operation != .delete {
            let type = (request.header("Content-Type") ?? "").split(separator: ";").first?.trimmingSpaces().lowercased() ?? ""
            guard ["application/json", "application/merge-patch+json"].contains(type) else {
                throw Refusal(status: 415, message: "an edit is a JSON object: send it with Content-Type: application/json (or application/merge-patch+json for PATCH)")
            }
        }
        let change: LocalEdit.Change = switch operation {
        case .patch: .patch(body)
        case .replace: .replace(body)
        case .delete: .delete
        case .create: .create(body)
        }
        let wait = try Self.preferredWait(request)
        let clientKey = try request.header("Idempotency-Key").map { header -> String in
            // §2.1: a quoted string (RFC 8941 sf-string), at most 255 characters.
            let text = header.trimmingSpaces()
            guard text.count >= 3, text.count <= 257, text.hasPrefix("\""), text.hasSuffix("\""),
                  text.dropFirst().dropLast().unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" }) else {
                throw Refusal(status: 400, message: "Idempotency-Key must be a quoted string, such as \"8e03978e-40d5-43e8-bc93-6894a57f9324\"")
            }
            return text
        }
        let fingerprint = BodyHash.of(Data((request.method + " " + request.path + "\n" + body).utf8))
        let database = try CacheDatabase(path: settings.databasePath, access: .write)
        let store = OutboxStore(database)
        if let clientKey, let earlier = try store.earlierRequest(clientKey) {
            return try Self.replay(earlier, fingerprint: fingerprint, store: store)
        }
        let source = try SourceStore(database).named(name)
        let ifMatch = request.header("If-Match")
        let precondition = { (shown: String?) throws(CacheError) -> Void in
            guard let ifMatch else { return }
            let tags = ifMatch.split(separator: ",").map { $0.trimmingSpaces() }
            // Strong comparison (§13.1.1): a weak tag never matches; `*` matches any row.
            let current = shown.map(OutboxStore.entityTag)
            guard tags.contains("*") ? shown != nil : current.map(tags.contains) == true else {
                throw .versionMismatch("the row is not the version If-Match names (it is \(current ?? "gone")): read it again, and edit that")
            }
        }
        let recorded = { (edit: LocalEdit) throws -> Void in
            if let clientKey {
                try store.keep(request: clientKey, fingerprint: fingerprint, status: 202, answer: Self.editJSON(edit).compact)
            }
        }
        let result = Result { () throws(CacheError) -> LocalEdit in
            try store.queue(change, source: source, key: key, precondition: precondition, recorded: recorded)
        }
        var queued: LocalEdit
        switch result {
        case .success(let edit):
            queued = edit
        case .failure(.refusedEdit(let reason)):
            throw Refusal(status: 400, message: reason)
        case .failure(.versionMismatch(let reason)):
            throw Refusal(status: 412, message: reason)
        case .failure(.database(let error)) where error.extendedCode == 1555 && clientKey != nil:
            // Another request with this key was kept first (SQLITE_CONSTRAINT_PRIMARYKEY): its answer.
            guard let earlier = try store.earlierRequest(clientKey!) else { throw CacheError.database(error) }
            return try Self.replay(earlier, fingerprint: fingerprint, store: store)
        case .failure(let failure):
            throw failure
        }
        var status = 202
        if let wait {
            var pusher = Pusher(open: { [settings] in try CacheDatabase(path: settings.databasePath, access: .write) },
                                fetcher: settings.fetcher, environment: settings.environment)
            pusher.timeout = max(1, wait)
            _ = try pusher.push([source])
            queued = try store.edit(queued.id)
            status = 200
        }
        let row = try store.shownRecordTag(source.name, key: queued.key)
        return HTTPResponse.json(status, Self.editJSON(queued),
                                 headers: [("Location", "/outbox/" + queued.id)] + (row.map { [("ETag", $0)] } ?? [])
                                     + (wait.map { [("Preference-Applied", "wait=\(Int($0))")] } ?? []))
    }

    /// What a decision about an edit answers when it cannot be made.
    static let decisionRefused = Route.Answer(400, "The edit is not in a state this decision takes, or the row has no conflict", [("application/json", Schema.error)])

    /// `POST /outbox/{id}/retry` and `/drop`: a decision about one edit, as `cache outbox` makes it.
    func decide(_ id: String, _ decision: (OutboxStore, LocalEdit, Source) throws(CacheError) -> LocalEdit) throws -> HTTPResponse {
        guard !settings.readOnly else { throw Refusal(status: 409, message: "this server is read-only: decide about edits where the cache is written, its primary") }
        let database = try CacheDatabase(path: settings.databasePath, access: .write)
        let store = OutboxStore(database)
        let found = Result { () throws(CacheError) in try store.edit(id) }
        guard case .success(let edit) = found else {
            if case .failure(.refusedEdit(let reason)) = found { throw Refusal(status: 404, message: reason) }
            return try Self.answer(found)  // the database's own trouble, as such
        }
        let source = try SourceStore(database).named(edit.source)
        return try Self.answer(Result { () throws(CacheError) in try decision(store, edit, source) })
    }

    /// A decision's edit as the answer, or its refusal as a 400. (A `catch` of one case of a
    /// typed error here crashes this compiler: the result is switched on instead.)
    static func answer(_ result: Result<LocalEdit, CacheError>) throws -> HTTPResponse {
        switch result {
        case .success(let edit): return HTTPResponse.json(200, editJSON(edit))
        case .failure(.refusedEdit(let reason)): throw Refusal(status: 400, message: reason)
        case .failure(let failure): throw failure
        }
    }

    /// `POST /sources/{name}/rows/{key}/resolve?take=local|remote`.
    func resolve(_ request: HTTPRequest, _ name: String, key: String) throws -> HTTPResponse {
        guard !settings.readOnly else { throw Refusal(status: 409, message: "this server is read-only: resolve conflicts where the cache is written, its primary") }
        let take = try arguments(request).first { $0.name == "take" }?.value
        guard take == "local" || take == "remote" else { throw Refusal(status: 400, message: "say whose version wins: take=local or take=remote") }
        let database = try CacheDatabase(path: settings.databasePath, access: .write)
        let source = try SourceStore(database).named(name)
        let store = OutboxStore(database)
        return try Self.answer(Result { () throws(CacheError) in try store.resolve(source: source, key: key, takeLocal: take == "local") })
    }

    /// The first answer to a request with this Idempotency-Key, or 422 for another request. Its
    /// `Location` is the first answer's (the edit's own); its `ETag` names the row as it shows
    /// now, the version a next `If-Match` must name (the first answer's, unless the row changed
    /// since).
    static func replay(_ earlier: (fingerprint: String, status: Int, answer: String), fingerprint: String, store: OutboxStore) throws -> HTTPResponse {
        guard earlier.fingerprint == fingerprint else {
            throw Refusal(status: 422, message: "this Idempotency-Key was sent with another request: a new request needs a new key")
        }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if case .object(let fields)? = try? JSONValue.parse(Data(earlier.answer.utf8)),
           case .string(let id)? = fields.first(where: { $0.0 == "id" })?.1 {
            headers.append(("Location", "/outbox/" + id))
            if case .string(let source)? = fields.first(where: { $0.0 == "source" })?.1, case .string(let key)? = fields.first(where: { $0.0 == "key" })?.1,
               let row = try store.shownRecordTag(source, key: key) {
                headers.append(("ETag", row))
            }
        }
        return HTTPResponse(status: earlier.status, headers: headers, body: .bytes(Array((earlier.answer + "\n").utf8)))
    }

    static func editJSON(_ edit: LocalEdit) -> JSONValue {
        .object([("id", .string(edit.id)), ("source", .string(edit.source)), ("key", .string(edit.key)),
                 ("op", .string(edit.operation.rawValue)), ("state", .string(edit.state.rawValue)), ("attempts", .int(edit.attempts)),
                 ("made_at", .string(edit.madeAt)), ("answer_status", .optional(edit.answerStatus)), ("answer", .optional(edit.answer))])
    }

    /// `GET /outbox`: the edits not yet applied, oldest first (`source=NAME` for one source's).
    func outbox(_ request: HTTPRequest) throws -> HTTPResponse {
        var names: [String] = []
        for (parameter, value) in try arguments(request) {
            guard parameter == "source", let value, !value.isEmpty else {
                throw Refusal(status: 400, message: "'\(parameter)' is not a parameter of outbox: use source=NAME")
            }
            names.append(value)
        }
        let known = try withEveryReader { try SourceStore($0).all().map(\.name) }.flatMap { $0 }
        if let unknown = names.first(where: { !known.contains($0) }) { throw CacheError.noSuchSource(unknown) }
        let edits = try withEveryReader { try OutboxStore($0).edits(of: names) }.flatMap { $0 }
        return HTTPResponse.json(200, .array(edits.map(Self.editJSON)))
    }

    /// `GET /outbox/{id}`: one edit, applied or not.
    func outboxEdit(_ id: String) throws -> HTTPResponse {
        let found = try withEveryReader { database -> LocalEdit? in try? OutboxStore(database).edit(id) }.compactMap { $0 }
        guard let edit = found.first else { throw Refusal(status: 404, message: "no edit \(id) in the outbox (GET /outbox lists them)") }
        return HTTPResponse.json(200, Self.editJSON(edit))
    }
}
