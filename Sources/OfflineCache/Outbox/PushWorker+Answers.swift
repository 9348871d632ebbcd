import FoundationEssentials

/// What an answer (or its absence) makes of the edit sent: applied, conflict, rejected, or
/// queued again; the table in docs/local-edits.md says the same.
extension PushWorker {
    /// What the answer makes of the edit (see the table in docs/local-edits.md).
    func settle(_ claimed: Claimed, response: FetchResponse, source: Source) throws {
        let status = response.status
        switch status {
        case 200..<300:
            try applied(claimed, response: response, source: source, note: nil)
        case 412:
            let url = source.writing.url(of: claimed.edit.key) ?? ""
            let read = try? fetch(Pusher.StoredRequest(method: "GET", url: url, idempotencyKey: "", ifMatch: nil, body: nil), source: source)
            let found = read.flatMap { (200..<300).contains($0.status) ? String(decoding: $0.body, as: UTF8.self) : nil }
            try conflict(claimed, remote: found.map { (try? OutboxStore.canonical($0, source: source).record) ?? $0 },
                         remoteETag: read?.etag, status: status, why: "the record changed upstream since the edit was made (412)")
        case 409 where claimed.sentBefore || claimed.request != nil && claimed.edit.attempts > 0:
            try again(claimed, status: status, answer: response, why: "the first send of this request is still in flight upstream (409)", source: source)
        case 401, 403:
            // The source stops before its edit is queued again: no other worker sends it.
            run.report.withLock {
                $0.sent.append(claimed.edit.id)
                $0.stoppedBy[source.name] = .httpStatus(status, url: claimed.request?.url ?? "", retryAfter: nil)
                $0.stopped[source.name] = "HTTP \(status) from \(Source.redacted(URL(string: claimed.request?.url ?? "") ?? source.url)): the upstream refused the credentials; \(source.name)'s edits stay queued"
            }
            settling {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer_status = ?, answer = ? WHERE id = ?",
                           [.int(status), .text(Self.kept(response.body)), .text(claimed.edit.id)])
                try store.log(claimed.edit.id, "refused", "HTTP \(status): the upstream refused the credentials; the edit stays queued", at: Date())
            }
        case 408, 425, 429, 500..<600:
            try again(claimed, status: status, answer: response, why: "HTTP \(status)", source: source)
        default:
            try rejected(claimed, status: status, answer: Self.kept(response.body),
                         why: Self.redirects.contains(status) ? "HTTP \(status): the upstream moved the record (set '--write-url' to where it is now)" : "HTTP \(status)")
        }
    }

    static let redirects: Set<Int> = [301, 302, 303, 307, 308]

    static func kept(_ body: Data) -> String {
        String(decoding: body.prefix(Pusher.keptAnswer), as: UTF8.self)
    }

    /// The network failed (or the request could not be made): a retryable failure goes again
    /// later with the same request; a missing token stops the source's push.
    func failed(_ claimed: Claimed, error: UpstreamError, source: Source) throws {
        if case .httpStatus(let status, _, _) = error, status != 408, status != 429, !(500...599).contains(status), claimed.request == nil {
            // The read a precondition needs was refused (405: the record cannot be read; 400…):
            // nothing was sent, and nothing is, until the source says how to check (its
            // --conflict-check) or the upstream reads.
            run.report.withLock { $0.stoppedBy[source.name] = error; $0.stopped[source.name] = "the upstream refused to read \(source.name)'s record \(claimed.edit.key) before a change (\(error)); its edits stay queued ('--conflict-check none' sends them without that read)" }
            settling {
                try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer = ? WHERE id = ?", [.text("\(error)"), .text(claimed.edit.id)])
            }
            return
        }
        if error.isRetryable || { if case .unreachable = error { return true }; return false }() {
            // The upstream's own word on when to ask again (Retry-After, a rate limit's reset) is kept.
            var answer: FetchResponse?
            if let wait = error.retryAfter {
                answer = FetchResponse(status: 0, body: Data("\(error)".utf8))
                answer?.retryAfter = wait
            }
            let status: Int? = if case .httpStatus(let code, _, _) = error { code } else { nil }
            try again(claimed, status: status, answer: answer, why: "\(error)", source: source)
            return
        }
        // A status thrown (a fetcher that throws for any status, as an app's may): judged as answered.
        if case .httpStatus(let status, _, let retryAfter) = error {
            var response = FetchResponse(status: status, body: Data())
            response.retryAfter = retryAfter
            return try settle(claimed, response: response, source: source)
        }
        run.report.withLock { $0.stoppedBy[source.name] = error; $0.stopped[source.name] = "\(error)" }
        settling {
            try db.run("UPDATE outbox SET state = 'queued', claim = NULL, answer = ? WHERE id = ?", [.text("\(error)"), .text(claimed.edit.id)])
        }
    }

    /// A 2xx: the edit applied. The answer's body, when it is the record, is what the row shows
    /// until the next sync (else the overlay as it was); its ETag is the precondition of the
    /// row's next edit; a record made here takes the key the upstream gave it.
    func applied(_ claimed: Claimed, response: FetchResponse, source: Source, note: String?) throws {
        let edit = claimed.edit
        let answered = String(decoding: response.body, as: UTF8.self)
        let record = edit.operation == .delete ? nil : try? OutboxStore.canonical(answered, source: source)
        var key = edit.key
        if edit.operation == .create {
            key = record?.key ?? response.location.flatMap { $0.split(separator: "/").last.map(String.init) } ?? edit.key
        }
        settling {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'applied', attempts = attempts + 1, answer_status = ?, answer = ?, claim = NULL, finished_at = ?, key = ?
                WHERE id = ?
                """, [.int(response.status), .text(Self.kept(response.body)), .text(Timestamp.format(now)), .text(key), .text(edit.id)])
            try store.log(edit.id, "applied", note ?? "HTTP \(response.status)" + (key != edit.key ? ": the upstream's key is \(key)" : ""), at: now)
            let shown = try db.scalarText("SELECT record FROM record_overlay WHERE source = ? AND key = ?", [.text(edit.source), .text(edit.key)])
            if key != edit.key {
                // The local key gives way to the upstream's, for the row and its later edits.
                try db.run("DELETE FROM record_overlay WHERE source = ? AND key = ?", [.text(edit.source), .text(edit.key)])
                try db.run("UPDATE outbox SET key = ? WHERE source = ? AND key = ? AND state IN \(OutboxStore.open)",
                           [.text(key), .text(edit.source), .text(edit.key)])
            }
            let result = edit.operation == .delete ? nil : record?.record ?? shown
            if let etag = response.etag, let result {
                try db.run("INSERT OR REPLACE INTO record_etags (source, key, etag, record) VALUES (?, ?, ?, ?)",
                           [.text(edit.source), .text(key), .text(etag), .text(result)])
            }
            // The row's next edit is made on this one's result.
            try db.run("""
                UPDATE outbox SET base = coalesce(?3, base), base_etag = ?4
                WHERE id = (SELECT id FROM outbox WHERE source = ?1 AND key = ?2 AND state IN \(OutboxStore.open) ORDER BY seq LIMIT 1)
                """, [.text(edit.source), .text(key), .optionalText(record?.record), .optionalText(response.etag)])
            try store.settle(edit.source, key: key, record: result, now: now)
            try store.rebuildOverlay(source, key: key, now: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.applied += 1
            $0.lines.append("applied   \(edit.source) \(key)  \(edit.operation.rawValue) (\(note ?? "HTTP \(response.status)"))")
        }
    }

    /// The upstream's record is not the version the edit was made on: the edit waits, with base,
    /// local and remote kept, for `cache outbox resolve`; the row's later edits wait behind it.
    func conflict(_ claimed: Claimed, remote: String?, remoteETag: String?, status: Int, why: String) throws {
        let edit = claimed.edit
        settling {
            try db.run("""
                UPDATE outbox SET state = 'conflict', attempts = attempts + 1, answer_status = ?, answer = ?, remote = ?, remote_etag = ?,
                    claim = NULL, request = NULL
                WHERE id = ?
                """, [.int(status), .text(why), .optionalText(remote), .optionalText(remoteETag), .text(edit.id)])
            try store.log(edit.id, "conflict", why, at: Date())
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.conflicts += 1
            $0.lines.append("conflict  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }

    /// Refused for good (a 4xx, or out of attempts): the overlay is reverted, the edit kept with
    /// the answer, and the row's later edits are held as blocked.
    func rejected(_ claimed: Claimed, status: Int?, answer: String, why: String) throws {
        let edit = claimed.edit
        guard let source = run.sources[edit.source] else { return }
        settling {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'rejected', attempts = attempts + 1, answer_status = ?, answer = ?, claim = NULL, finished_at = ?
                WHERE id = ?
                """, [.optionalInt(status), .text(answer), .text(Timestamp.format(now)), .text(edit.id)])
            try store.log(edit.id, "rejected", why, at: now)
            for later in try db.query("SELECT id FROM outbox WHERE source = ? AND key = ? AND state = 'queued' AND seq > (SELECT seq FROM outbox WHERE id = ?)",
                                      [.text(edit.source), .text(edit.key), .text(edit.id)], row: { $0.text(0) ?? "" }) {
                try db.run("UPDATE outbox SET state = 'blocked' WHERE id = ?", [.text(later)])
                try store.log(later, "blocked", "made on edit \(edit.id), which was rejected", at: now)
            }
            try store.rebuildOverlay(source, key: edit.key, now: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.rejected += 1
            $0.lines.append("rejected  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }

    /// A failure that may pass: queued again after a backoff (or the upstream's `Retry-After`),
    /// the same request; rejected once the source's attempts are used, or once the upstream
    /// answered the edit's own request and the edit is older than its `--push-max-age`.
    func again(_ claimed: Claimed, status: Int?, answer: FetchResponse?, why: String, source: Source) throws {
        let edit = claimed.edit
        let attempts = edit.attempts + 1
        guard attempts < source.writing.attempts else {
            return try rejected(claimed, status: status, answer: answer.map { Self.kept($0.body) } ?? why,
                                why: "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") ('--push-attempts'); the last: \(why)")
        }
        // Only an answer to the edit's own request counts: offline, or when the read before it
        // failed, the edit was not tried (one made offline a month ago may still apply); a 409
        // says its first send is still being applied.
        if let maxAge = source.writing.maxAgeSeconds, let status, status != 409, claimed.request != nil,
           let age = Timestamp.parse(edit.madeAt).map({ Int(Date().timeIntervalSince($0)) }), age >= maxAge {
            return try rejected(claimed, status: status, answer: answer.map { Self.kept($0.body) } ?? why,
                                why: "gave up: made \(DurationText.format(age)) ago, past '--push-max-age' (\(DurationText.format(maxAge))); the last: \(why)")
        }
        let wait = answer?.retryAfter ?? pusher.backoff.delay(afterFailures: attempts)
        // Marked tried before it is queued again: another worker must not take it back at once.
        run.tried.withLock { _ = $0.insert(edit.id) }
        settling {
            let now = Date()
            try db.run("""
                UPDATE outbox SET state = 'queued', attempts = ?, answer_status = ?, answer = ?, claim = NULL, next_at = ? WHERE id = ?
                """, [.int(attempts), .optionalInt(status), .text(answer.map { Self.kept($0.body) } ?? why),
                      .text(Timestamp.format(now.addingTimeInterval(wait))), .text(edit.id)])
            try store.log(edit.id, "failed", "\(why); sent again after \(DurationText.format(Int(wait.rounded(.up)))) with the same request", at: now)
        }
        run.report.withLock {
            $0.sent.append(edit.id)
            $0.lines.append("retrying  \(edit.source) \(edit.key)  \(edit.operation.rawValue): \(why)")
        }
    }
}
