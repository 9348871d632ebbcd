import FoundationEssentials

/// The outbox and the overlay in the cache file: an edit is queued with the row as it then shows
/// in one transaction; what a push or a person decides about an edit is written here too. The
/// overlay is derived: the upstream's record (`records`) with every open edit of the row applied
/// in order (`rebuildOverlay`), except while applied edits wait for the next sync.
package struct OutboxStore {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }
    init(db: Connection) { self.db = db }

    /// The states that hold a row's later edits back, and the ones the overlay shows.
    static let open = "('queued', 'in_flight', 'conflict', 'rejected', 'blocked')"
    static let shown = "('queued', 'in_flight', 'conflict')"

    // MARK: Queueing

    /// Queues `change` of the record `key` of `source` (nil for a record made here), and shows it
    /// at once, in one transaction. Refused with nothing written: a kind that cannot be written,
    /// a source without the write URL the change needs, a body that is not one JSON object or is
    /// past the source's size limit, a record that is not cached, a change of the key.
    /// `precondition` sees the row as it shows before the edit (nil: none), and may refuse it
    /// (`versionMismatch`); `recorded` sees the edit queued: both inside the transaction.
    package func queue(_ change: LocalEdit.Change, source: Source, key: String?, now: Date = Date(),
                       precondition: ((String?) throws(CacheError) -> Void)? = nil,
                       recorded: ((LocalEdit) throws -> Void)? = nil) throws(CacheError) -> LocalEdit {
        let made = try Self.check(change, source: source, key: key)
        do {
            return try db.inTransaction {
                try queued(change, source: source, key: key, made: made.key, now: now, precondition: precondition, recorded: recorded)
            }
        } catch let error as CacheError {
            throw error
        } catch {
            throw .database(SyncEngine.databaseError(error))
        }
    }

    /// Queues every change of `edits` in one transaction, in order: all of them, or none when
    /// one is refused (a refusal names the edit by its place and key; a record that is not
    /// cached is `noSuchRow`, which names its key). One commit for many edits: an app importing a
    /// list of changes, or marking many rows at once, writes each page of the file once.
    package func queue(_ edits: [(key: String?, change: LocalEdit.Change)], source: Source, now: Date = Date()) throws(CacheError) -> [LocalEdit] {
        func naming(_ index: Int, _ error: CacheError) -> CacheError {
            guard edits.count > 1, case .refusedEdit(let reason) = error else { return error }
            return .refusedEdit("edit \(index + 1) of \(edits.count)" + (edits[index].key.map { " (key \($0))" } ?? "") + ": " + reason)
        }
        var made: [String?] = []
        for (index, edit) in edits.enumerated() {
            do { made.append(try Self.check(edit.change, source: source, key: edit.key).key) } catch { throw naming(index, error) }
        }
        do {
            return try db.inTransaction {
                try edits.indices.map { index in
                    do {
                        return try queued(edits[index].change, source: source, key: edits[index].key, made: made[index], now: now, precondition: nil, recorded: nil)
                    } catch let error as CacheError {
                        throw naming(index, error)
                    }
                }
            }
        } catch let error as CacheError {
            throw error
        } catch {
            throw .database(SyncEngine.databaseError(error))
        }
    }

    /// One edit queued, inside the caller's transaction.
    private func queued(_ change: LocalEdit.Change, source: Source, key: String?, made: String?, now: Date,
                        precondition: ((String?) throws(CacheError) -> Void)?, recorded: ((LocalEdit) throws -> Void)?) throws -> LocalEdit {
        let shown = try shownRecord(source.name, key: key ?? made ?? "")
        try precondition?(shown.record)
        var given = key ?? made
        switch change {
        case .create:
            if let given, shown.exists {
                throw CacheError.refusedEdit("\(source.name) already has a record \(given): edit it, or create one with another key")
            }
            given = given ?? "new-" + UUID().uuidString.lowercased().prefix(8)
        default:
            guard shown.exists else { throw CacheError.noSuchRow(given ?? "", source: source.name) }
            guard shown.record != nil else {
                throw CacheError.refusedEdit("\(source.name) \(given ?? ""): its removal is pending; 'cache outbox' shows it")
            }
        }
        let key = given!
        var after: String?
        switch change {
        case .patch(let patch):
            let merged = MergePatch.apply(try Self.object(patch), to: try Self.object(shown.record ?? "{}"))
            after = try Self.keep(merged.compact, source: source, key: key, local: shown.local)
        case .replace(let record):
            after = try Self.keep(record, source: source, key: key, local: shown.local)
        case .create(let record):
            after = try Self.canonical(record, source: source).record
        case .delete:
            after = nil
        }
        let earlier = try db.scalarInt("SELECT count(*) FROM outbox WHERE source = ? AND key = ? AND state IN \(Self.open)",
                                       [.text(source.name), .text(key)]) ?? 0
        // The version the edit is made on: the upstream's record, with the ETag a write's
        // answer gave for that very record; an edit after open ones is made on their
        // result, and takes its precondition from the last one's answer when it applies.
        let upstream = try upstreamVersion(source.name, key: key)
        let base = earlier > 0 ? shown.record : upstream?.0
        let edit = LocalEdit(id: UUID().uuidString.lowercased(), source: source.name, key: key, operation: change.operation,
                               body: try change.body.map { try Self.object($0).compact }, state: .queued, attempts: 0,
                               madeAt: Timestamp.format(now), base: base)
        try db.run("""
            INSERT INTO outbox (id, seq, source, key, op, body, base, base_etag, state, made_at)
            VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM outbox), ?, ?, ?, ?, ?, ?, 'queued', ?)
            """, [.text(edit.id), .text(edit.source), .text(key), .text(edit.operation.rawValue), .optionalText(edit.body),
                  .optionalText(base), .optionalText(earlier > 0 ? nil : upstream?.1), .text(edit.madeAt)])
        try log(edit.id, "edited", edit.operation.rawValue + (edit.body.map { " " + $0 } ?? ""), at: now)
        // A removal keeps showing the record it removes until it applies.
        try db.run("""
            INSERT INTO record_overlay (source, key, record, removed, created, pending, settled_at, made_at)
            VALUES (?1, ?2, ?3, ?4, NOT EXISTS (SELECT 1 FROM records WHERE source = ?1 AND key = ?2), 1, NULL, ?5)
            ON CONFLICT (source, key) DO UPDATE SET record = excluded.record, removed = excluded.removed, pending = 1
            """, [.text(source.name), .text(key), .text(after ?? shown.record ?? "{}"), .int(after == nil ? 1 : 0), .text(edit.madeAt)])
        try recorded?(edit)
        return edit
    }

    /// What can be refused before the cache is read: the kind, the write URL, the body's form
    /// and size; and a new record's own key, if it has one.
    static func check(_ change: LocalEdit.Change, source: Source, key: String?) throws(CacheError) -> (key: String?, Void) {
        guard source.kind.keepsRecords else {
            throw .refusedEdit("\(source.name) is of the kind \(source.kind.rawValue), whose rows cannot be edited: only sources that keep records (json, csv, ndjson) can")
        }
        switch change.operation {
        case .create:
            guard source.writing.createURL != nil else {
                throw .refusedEdit("\(source.name) has no '--create-url': set where new records are posted with 'cache sources set \(source.name) --create-url URL'")
            }
        default:
            guard source.writing.recordURL != nil else {
                throw .refusedEdit("\(source.name) has no '--write-url': set where a record is written with 'cache sources set \(source.name) --write-url https://…/{key}'")
            }
        }
        if let body = change.body {
            let limit = source.maxBytes ?? FetchRequest.defaultMaxBytes
            guard body.utf8.count <= limit else {
                throw .refusedEdit("the edit is \(body.utf8.count) bytes, past \(source.name)'s limit of \(limit) ('--max-bytes')")
            }
            do { _ = try object(body) } catch let error as CacheError { throw error } catch { throw .refusedEdit("\(error)") }
        }
        if case .create(let record) = change {
            // A new record that carries its key is kept under it; one without is numbered upstream.
            let own: String?
            do { own = try canonical(record, source: source).key } catch { own = nil }
            if let key, let own, key != own {
                throw .refusedEdit("the new record's key is \(own), not \(key)")
            }
            return (key ?? own, ())
        }
        return (key, ())
    }

    /// `text` as one JSON object, read strictly (RFC 8259; a key named twice is refused).
    static func object(_ text: String) throws -> JSONValue {
        let value: JSONValue
        do { value = try JSONValue.parse(Data(text.utf8)) } catch {
            throw CacheError.refusedEdit("the edit is not JSON: \(error)")
        }
        guard case .object = value else { throw CacheError.refusedEdit("the edit must be one JSON object, such as {\"done\": true}") }
        return value
    }

    /// A record as the cache keeps it (canonical JSON), and its key by the source's key fields
    /// (nil when it has none).
    static func canonical(_ record: String, source: Source) throws -> (record: String, key: String?) {
        let layout = RecordLayout(key: source.kind.keyPaths(source.layout?.key ?? []))
        do {
            let page = try RecordDecoder.decode(Data(record.utf8), layout: layout)
            guard page.records.count == 1 else { throw CacheError.refusedEdit("the edit must be one JSON object") }
            return (page.records.json(0), page.records.key(0))
        } catch let error as CacheError {
            throw error
        } catch {
            // No key fields: kept as it is, without a key.
            return (try object(record).compact, nil)
        }
    }

    /// `record` canonical, refused if its key is not `key` (an edit cannot change a record's key;
    /// a record made here under a `local` key has none of its own yet).
    static func keep(_ record: String, source: Source, key: String, local: Bool = false) throws -> String {
        let kept = try canonical(record, source: source)
        guard kept.key == key || (local && kept.key == nil) else {
            let fields = source.layout?.keyDescription ?? "key"
            throw CacheError.refusedEdit(kept.key == nil
                ? "the edited record has no \(fields): an edit keeps the record's key fields"
                : "the edit changes the key (\(fields)) from \(key) to \(kept.key!): remove the record and create another instead")
        }
        return kept.record
    }

    /// The row as the cache shows it now: whether there is one, its record (nil: its removal is
    /// pending), and whether it is a record made here that the upstream has not numbered yet.
    func shownRecord(_ source: String, key: String) throws -> (exists: Bool, record: String?, local: Bool) {
        if let (record, removed, created, pending) = try db.query("SELECT record, removed, created, pending FROM record_overlay WHERE source = ? AND key = ?",
                                                                   [.text(source), .text(key)], row: { ($0.text(0), $0.int(1) != 0, $0.int(2) != 0, $0.int(3) != 0) }).first {
            // A removal that applied is gone; one pending shows, but cannot be edited.
            guard !removed || pending else { return (false, nil, false) }
            let local = created && pending && key.hasPrefix("new-")
            return (true, removed ? nil : record, local)
        }
        let record = try db.scalarText("SELECT record FROM records WHERE source = ? AND key = ?", [.text(source), .text(key)])
        return (record != nil, record, false)
    }

    /// The upstream's version of a record as this cache knows it — a write's answer not yet
    /// brought by a sync, else the synced record — with the ETag an answer gave for that very
    /// version, if any.
    func upstreamVersion(_ source: String, key: String) throws -> (String?, String?)? {
        guard let record = try upstreamRecord(source, key: key) else { return nil }
        let etag = try db.scalarText("SELECT etag FROM record_etags WHERE source = ? AND key = ? AND record = ?",
                                     [.text(source), .text(key), .text(record)])
        return (record, etag)
    }

    /// The upstream's record as this cache knows it: the version a write's answer gave, not yet
    /// brought by a sync, else the synced one; nil when there is none (or the upstream removed it).
    func upstreamRecord(_ source: String, key: String) throws -> String? {
        if let (upstream, gone) = try db.query("SELECT upstream, upstream_gone FROM record_overlay WHERE source = ? AND key = ? AND settled_at IS NOT NULL",
                                               [.text(source), .text(key)], row: { ($0.text(0), $0.int(1) != 0) }).first {
            if gone { return nil }
            if let upstream { return upstream }
        }
        return try db.scalarText("SELECT record FROM records WHERE source = ? AND key = ?", [.text(source), .text(key)])
    }

    /// A row's record as a strong entity-tag (RFC 9110 §8.8.3): what a client's `If-Match`
    /// names to change the version it read.
    package static func entityTag(_ record: String) -> String {
        "\"" + BodyHash.of(Data(record.utf8)) + "\""
    }

    /// The strong entity-tag of the row as it shows now, if there is one.
    package func shownRecordTag(_ source: String, key: String) throws -> String? {
        try shownRecord(source, key: key).record.map(Self.entityTag)
    }

    /// A client's earlier request with this Idempotency-Key: its fingerprint and first answer.
    package func earlierRequest(_ key: String) throws -> (fingerprint: String, status: Int, answer: String)? {
        try db.query("SELECT fingerprint, status, answer FROM edit_requests WHERE key = ? AND at > ?",
                     [.text(key), .text(Timestamp.format(Date().addingTimeInterval(-86_400)))]) {
            ($0.text(0) ?? "", $0.int(1), $0.text(2) ?? "")
        }.first
    }

    /// Keeps a client's Idempotency-Key with its request's fingerprint and answer (a day).
    package func keep(request key: String, fingerprint: String, status: Int, answer: String) throws {
        try db.run("DELETE FROM edit_requests WHERE at < ?", [.text(Timestamp.format(Date().addingTimeInterval(-86_400)))])
        try db.run("INSERT INTO edit_requests (key, fingerprint, status, answer, at) VALUES (?, ?, ?, ?, ?)",
                   [.text(key), .text(fingerprint), .int(status), .text(answer), .text(Timestamp.now())])
    }

    /// The outbox's log after `rowid`, oldest first: for `cache serve`'s events.
    package func events(after rowid: Int) throws -> [(rowid: Int, source: String, key: String, edit: String, event: String, state: String)] {
        try db.query("""
            SELECT l.id, o.source, o.key, o.id, l.event, o.state FROM outbox_log l JOIN outbox o ON o.id = l.edit
            WHERE l.id > ? ORDER BY l.id LIMIT 1000
            """, [.int(rowid)]) { ($0.int(0), $0.text(1) ?? "", $0.text(2) ?? "", $0.text(3) ?? "", $0.text(4) ?? "", $0.text(5) ?? "") }
    }

    /// The newest entry of the outbox's log (0: none, or no outbox in an older file).
    package func lastEvent() -> Int {
        (try? db.scalarInt("SELECT coalesce(max(id), 0) FROM outbox_log")).flatMap { $0.map(Int.init) } ?? 0
    }

    // MARK: The overlay

    /// Makes the row's overlay again: the upstream's record as this cache knows it
    /// (`upstreamRecord`) with every open edit of it that is shown, in order. With none left, the
    /// overlay shows the version a write's answer gave until a sync brings it, or goes.
    func rebuildOverlay(_ source: Source, key: String, now: Date) throws {
        let cached = try db.scalarInt("SELECT count(*) FROM records WHERE source = ? AND key = ?", [.text(source.name), .text(key)]) == 1
        let settled = try db.query("SELECT upstream, upstream_gone FROM record_overlay WHERE source = ? AND key = ? AND settled_at IS NOT NULL",
                                   [.text(source.name), .text(key)], row: { ($0.text(0), $0.int(1) != 0) }).first
        let edits = try db.query("SELECT op, body FROM outbox WHERE source = ? AND key = ? AND state IN \(Self.shown) ORDER BY seq",
                                 [.text(source.name), .text(key)]) { (LocalEdit.Operation(rawValue: $0.text(0) ?? "") ?? .patch, $0.text(1)) }
        let upstream = try upstreamRecord(source.name, key: key)
        guard !edits.isEmpty else {
            if let settled {
                try db.run("""
                    UPDATE record_overlay SET record = coalesce(?3, record), removed = ?4, pending = 0 WHERE source = ?1 AND key = ?2
                    """, [.text(source.name), .text(key), .optionalText(settled.0), .int(settled.1 ? 1 : 0)])
            } else {
                try db.run("DELETE FROM record_overlay WHERE source = ? AND key = ?", [.text(source.name), .text(key)])
            }
            return
        }
        var record: JSONValue? = try upstream.map { try Self.object($0) }
        var removed = false
        for (operation, body) in edits {
            let value = try body.map { try Self.object($0) }
            switch operation {
            case .patch: record = MergePatch.apply(value ?? .object([]), to: record)
            case .replace, .create: record = value; removed = false
            case .delete: removed = true
            }
        }
        try db.run("""
            INSERT INTO record_overlay (source, key, record, removed, created, pending, settled_at, made_at) VALUES (?, ?, ?, ?, ?, 1, NULL, ?)
            ON CONFLICT (source, key) DO UPDATE SET record = excluded.record, removed = excluded.removed, created = excluded.created, pending = 1
            """, [.text(source.name), .text(key), .text(try Self.canonical((record ?? .object([])).compact, source: source).record),
                  .int(removed ? 1 : 0), .int(cached ? 0 : 1), .text(Timestamp.format(now))])
    }

    /// An edit of the row applied: `record` is the upstream's version now (nil: it removed the
    /// record), which the row shows — with its open edits on it (`rebuildOverlay`) — until a sync
    /// begun after now brings the upstream's own.
    func settle(_ source: String, key: String, record: String?, now: Date) throws {
        try db.run("""
            INSERT INTO record_overlay (source, key, record, removed, created, pending, upstream, upstream_gone, settled_at, made_at)
            VALUES (?1, ?2, coalesce(?3, '{}'), ?4, NOT EXISTS (SELECT 1 FROM records WHERE source = ?1 AND key = ?2), 0, ?3, ?4, ?5, ?5)
            ON CONFLICT (source, key) DO UPDATE SET upstream = ?3, upstream_gone = ?4, settled_at = ?5
            """, [.text(source), .text(key), .optionalText(record), .int(record == nil ? 1 : 0), .text(Timestamp.format(now))])
    }

    func log(_ edit: String, _ event: String, _ detail: String?, at now: Date) throws {
        try db.run("INSERT INTO outbox_log (edit, at, event, detail) VALUES (?, ?, ?, ?)",
                   [.text(edit), .text(Timestamp.format(now)), .text(event), .optionalText(detail)])
    }
}
