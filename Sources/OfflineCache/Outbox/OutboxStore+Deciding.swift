import FoundationEssentials

/// What a person (or a push's answer) decides about an edit: retry, drop, resolve.
extension OutboxStore {
    /// `cache outbox retry`: a conflict, rejected or blocked edit (or a queued one waiting out
    /// its backoff) is queued again. One whose last request may have reached the upstream without
    /// its answer coming back (queued, or rejected after failures that may pass) keeps that very
    /// request, its `Idempotency-Key` and all, so it cannot apply twice; any other goes as a new
    /// request with a new key.
    package func retry(_ id: String, source: Source, now: Date = Date()) throws(CacheError) -> LocalEdit {
        try deciding(id) { edit in
            guard [.conflict, .rejected, .blocked, .queued].contains(edit.state) else {
                throw CacheError.refusedEdit("edit \(edit.id) is \(edit.state.rawValue): only a queued, conflict, rejected or blocked edit is retried")
            }
            // A conflict goes onto the upstream's version found then (as resolve --take local); a
            // rejected or blocked one onto the upstream's version as this cache knows it, when
            // no open edit of the row comes before it.
            let earlier = try db.scalarInt("""
                SELECT count(*) FROM outbox WHERE source = ? AND key = ? AND state IN \(Self.open)
                    AND seq < (SELECT seq FROM outbox WHERE id = ?)
                """, [.text(edit.source), .text(edit.key), .text(edit.id)]) ?? 0
            var base = (edit.base, try db.scalarText("SELECT base_etag FROM outbox WHERE id = ?", [.text(edit.id)]))
            if edit.state == .conflict {
                base = (edit.remote, try remoteETag(edit.id))
            } else if earlier == 0, edit.state != .queued, let known = try upstreamVersion(edit.source, key: edit.key) {
                base = known
            }
            let stored = try db.scalarText("SELECT request FROM outbox WHERE id = ?", [.text(edit.id)])
            let unanswered = edit.state == .queued
                || (edit.state == .rejected && (edit.answerStatus.map(Self.mayPass) ?? true) && stored != nil)
            if unanswered {
                try db.run("UPDATE outbox SET state = 'queued', attempts = 0, next_at = NULL, claim = NULL WHERE id = ?", [.text(edit.id)])
                try log(edit.id, "retried", "the same request again: its last answer was lost or may pass", at: now)
            } else {
                try db.run("""
                    UPDATE outbox SET state = 'queued', attempts = 0, next_at = NULL, request = NULL, claim = NULL, base = ?2, base_etag = ?3
                    WHERE id = ?1
                    """, [.text(edit.id), .optionalText(base.0), .optionalText(base.1)])
                try log(edit.id, "retried", nil, at: now)
            }
            try rebuildOverlay(source, key: edit.key, now: now)
        }
    }

    /// `cache outbox drop`: the edit will never be sent; the row shows what is left.
    package func drop(_ id: String, source: Source, now: Date = Date()) throws(CacheError) -> LocalEdit {
        try deciding(id) { edit in
            guard edit.state.isOpen, edit.state != .inFlight else {
                throw CacheError.refusedEdit("edit \(edit.id) is \(edit.state.rawValue): only an edit not yet sent, or one that failed, is dropped")
            }
            try db.run("UPDATE outbox SET state = 'dropped', claim = NULL, finished_at = ? WHERE id = ?", [.text(Timestamp.format(now)), .text(edit.id)])
            try log(edit.id, "dropped", nil, at: now)
            try rebuildOverlay(source, key: edit.key, now: now)
        }
    }

    /// `cache outbox resolve NAME KEY --take local|remote`, for the row's conflict: `local` sends
    /// the edit again onto the upstream's version; `remote` drops it and shows the upstream's.
    package func resolve(source: Source, key: String, takeLocal: Bool, now: Date = Date()) throws(CacheError) -> LocalEdit {
        let id: String
        do {
            guard let found = try db.scalarText("SELECT id FROM outbox WHERE source = ? AND key = ? AND state = 'conflict' ORDER BY seq LIMIT 1",
                                                [.text(source.name), .text(key)]) else {
                throw CacheError.refusedEdit("\(source.name) \(key) has no conflict to resolve ('cache outbox \(source.name)' lists its edits)")
            }
            id = found
        } catch let error as CacheError { throw error } catch { throw .database(SyncEngine.databaseError(error)) }
        if takeLocal { return try retry(id, source: source, now: now) }
        return try deciding(id) { edit in
            try db.run("UPDATE outbox SET state = 'dropped', finished_at = ? WHERE id = ?", [.text(Timestamp.format(now)), .text(edit.id)])
            try log(edit.id, "resolved", "took the upstream's version", at: now)
            // The row's later edits go on from the upstream's version.
            try db.run("""
                UPDATE outbox SET base = ?3, base_etag = ?4 WHERE source = ?1 AND key = ?2 AND state IN \(Self.open) AND id <> ?5
                """, [.text(source.name), .text(key), .optionalText(edit.remote), .optionalText(try remoteETag(edit.id)), .text(edit.id)])
            try settle(source.name, key: key, record: edit.remote, now: now)
            try rebuildOverlay(source, key: key, now: now)
        }
    }

    /// An answer after which the same request may succeed (and may have applied): 408, 409 to
    /// a retry, 425, 429, 5xx.
    static func mayPass(_ status: Int) -> Bool { [408, 409, 425, 429].contains(status) || (500...599).contains(status) }

    private func remoteETag(_ id: String) throws -> String? {
        try db.scalarText("SELECT remote_etag FROM outbox WHERE id = ?", [.text(id)])
    }

    private func deciding(_ id: String, _ body: (LocalEdit) throws -> Void) throws(CacheError) -> LocalEdit {
        do {
            return try db.inTransaction {
                let found = try self.edit(id)
                try body(found)
                return try self.edit(found.id)
            }
        } catch let error as CacheError { throw error } catch { throw .database(SyncEngine.databaseError(error)) }
    }
}
