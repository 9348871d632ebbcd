import FoundationEssentials

extension SourceStatus {
    /// One source's status as `status --json` shows it (and `cache serve`'s `/sources`).
    /// On a read-only follower, `replicaLag` is how far behind its primary it is (`replica_lag_s`,
    /// null before any heartbeat); a primary's objects have no such key.
    package func json(readOnly: Bool, database: String, replicaLag: ReplicaLag = .primary) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("source", .string(source.name)), ("kind", .string(source.kind.rawValue)),
            ("url", .string(source.displayURL)), ("mode", .string(source.mode.rawValue)),
            ("ttl_s", .int(source.ttlSeconds)), ("rows", .int(rows)),
            ("stale_rows", .int(staleRows)), ("stale", .bool(stale)),
            ("last_success_at", .optional(lastSuccessAt)), ("last_success_age_s", .optional(ageSeconds)),
            ("last_attempt_at", .optional(lastAttemptAt)),
            ("last_outcome", .optional(lastOutcome)),
            ("last_error", .optional(lastError)),
            ("next_attempt_at", .optional(nextAttemptAt)),
            ("watermark", .optional(watermark)), ("last_full_at", .optional(lastFullAt)),
            ("index_damaged_at", .optional(indexDamagedAt)), ("index_damage", .optional(indexDamage)),
            ("edits_queued", .int(queuedEdits)), ("edits_conflict", .int(conflictedEdits)), ("edits_rejected", .int(rejectedEdits)),
            ("oldest_edit_at", .optional(oldestEditAt)), ("writable", .bool(source.writing.recordURL != nil)),
            ("read_only", .bool(readOnly)), ("database", .string(database)),
        ]
        if let lag = replicaLag.json { fields.append(("replica_lag_s", lag)) }
        return .object(fields)
    }
}

/// A source judged against how old its last success may be: `status --max-age` and `cache
/// serve`'s `/healthz` give the same verdicts.
package struct HealthVerdict: Sendable {
    package let status: SourceStatus
    /// The bound, in seconds.
    package let limit: Int
    package let ok: Bool

    /// How many of its TTLs a source may go without a success, by its own bound (`ownBound`).
    package static let ttlsWithoutSuccess = 3

    /// Each source against its own `--alert-after`, else `maxAge`; with `ownBound` and no
    /// `maxAge`, else three times its TTL (else, nil: only sources with their own). Ok when it
    /// succeeded within its bound and is not held; a source that never succeeded is ok until
    /// its bound has passed since it was added (`addedAt`, by name; unknown: not ok).
    package static func of(_ statuses: [SourceStatus], maxAge: Int?, ownBound: Bool = false,
                           addedAt: [String: String] = [:], now: Date = Date()) -> [HealthVerdict] {
        statuses.compactMap { status -> HealthVerdict? in
            let own = ownBound ? status.source.ttlSeconds * ttlsWithoutSuccess : nil
            guard let limit = status.source.alertAfterSeconds ?? maxAge ?? own else { return nil }
            // To the millisecond, not the whole seconds `status` shows.
            let since = status.lastSuccessAt ?? addedAt[status.source.name]
            let age = since.flatMap(Timestamp.parse).map { now.timeIntervalSince($0) }
            let within = age.map { $0 <= Double(limit) } ?? false
            return HealthVerdict(status: status, limit: limit, ok: !status.isHeld && within && (status.lastSuccessAt != nil || maxAge == nil))
        }
    }

    /// As `status --max-age --json` shows it (and `/healthz`).
    package var json: JSONValue {
        .object([
            ("source", .string(status.source.name)), ("ok", .bool(ok)),
            ("max_age_s", .int(limit)), ("last_success_at", .optional(status.lastSuccessAt)),
            ("last_success_age_s", .optional(status.ageSeconds)),
            ("last_error", .optional(status.lastError)),
            ("held", .bool(status.isHeld)),
        ])
    }
}

extension SyncReport {
    /// A sync's report as `sync --json` shows it (and `POST /sources/NAME/refresh` with
    /// `Prefer: wait`).
    package var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("source", .string(source)), ("outcome", .string(outcome.rawValue)),
            ("inserted", .int(counts.inserted)), ("updated", .int(counts.updated)),
            ("deleted", .int(counts.deleted)), ("http_status", .optional(httpStatus)),
            ("error", .optional(errorText)), ("duration_ms", .int(durationMs)),
            ("attempts", .int(attempts)), ("note", .optional(note)),
            ("not_modified", .bool(httpStatus == 304)),
            ("retry_after_wait_s", .double((retryAfterWait * 1000).rounded() / 1000)),
            ("repeated", .int(repeatedRecords)),
        ]
        if outcome == .planned {
            fields.append(("plan", .array((plan ?? []).map(\.json))))
            fields.append(("would_hold", .optional(wouldHold)))
        }
        return .object(fields)
    }
}

extension ChangeRecord {
    /// One change as `history --json` and `diff --json` show it (and `/sources/NAME/changes`).
    package var json: JSONValue {
        .object([
            ("run", .int(runID)), ("at", .string(at)), ("source", .string(source)),
            ("row", .string(rowKind)), ("id", rows == nil ? .string(rowID) : .null), ("change", .string(change)),
            ("before", before.map(JSONValue.raw) ?? .null), ("after", after.map(JSONValue.raw) ?? .null),
        ] + (rows.map { [("rows", JSONValue.int($0))] } ?? []))
    }
}

extension RowVersion {
    /// One version of a row as `log --json` shows it (and `/sources/NAME/rows/KEY/log`).
    package var json: JSONValue {
        .object([
            ("run", change == "current" ? .null : .int(runID)),
            ("at", change == "current" ? .null : .string(at)), ("change", .string(change)),
            ("row", change == "current" ? .null : .string(rowKind)),
            ("fields", .array(fields.map { field in
                .object([("field", .string(field.field)), ("before", field.before.map(JSONValue.raw) ?? .null),
                         ("after", field.after.map(JSONValue.raw) ?? .null)])
            })),
            ("before", before.map(JSONValue.raw) ?? .null), ("after", after.map(JSONValue.raw) ?? .null),
        ])
    }

    /// The fields a version shows: those that changed in an update, every one otherwise.
    package var fields: [RecordDiff.FieldChange] {
        RecordDiff.changes(before: before ?? "{}", after: after ?? "{}")
    }
}
