import FoundationEssentials

/// Every source's freshness and sync figures in the Prometheus text exposition format, as
/// `cache metrics` writes them and `cache serve` answers `/metrics`.
package enum MetricsExposition {
    /// One file's figures: its sources', and its lag behind its primary (on a follower; labelled
    /// with the file when it is one of `several`).
    package typealias Part = (metrics: [SourceMetrics], lag: (file: String?, seconds: Double)?)

    package static func part(of database: CacheDatabase, readOnly: Bool, several: Bool,
                             counting: CacheReader.RowCounting = .everyRow) throws -> Part {
        let lag = ReplicaLag.of(database, readOnly: readOnly)
        // A heartbeat from the future measures nothing: +Inf, so an alert on the lag fires.
        let seconds = lag.seconds ?? lag.skew.map { _ in Double.infinity }
        return (try CacheReader(database).metrics(counting: counting), seconds.map { (several ? database.path : nil, $0) })
    }

    /// Every file's figures as one exposition.
    package static func text(_ parts: [Part]) -> String {
        text(parts.flatMap(\.metrics), replicaLags: parts.compactMap(\.lag))
    }

    /// One family per figure, each with its HELP and TYPE; a sample per source that has a value
    /// (a source that never succeeded has no last-success sample).
    /// With `replicaLags` (a follower's), `cache_replica_lag_seconds` too: one sample, or one
    /// per file of several (labelled `db`).
    package static func text(_ metrics: [SourceMetrics], replicaLags: [(file: String?, seconds: Double)] = []) -> String {
        var out = ""
        if !replicaLags.isEmpty {
            out += "# HELP cache_replica_lag_seconds Seconds since the primary's newest heartbeat this follower holds: how far behind it is, at most (+Inf when that heartbeat is stamped in this machine's future).\n"
            out += "# TYPE cache_replica_lag_seconds gauge\n"
            for lag in replicaLags {
                out += "cache_replica_lag_seconds\(lag.file.map { "{" + label("db", $0) + "}" } ?? "") \(number((lag.seconds * 1000).rounded() / 1000))\n"
            }
        }
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
            out += "# HELP cache_\(name) \(help)\n# TYPE cache_\(name) \(type)\n"
            for sample in samples { out += "cache_\(name){\(sample.labels)} \(number(sample.value))\n" }
        }
        func gauge(_ name: String, _ help: String, _ value: (SourceMetrics) -> Double?) {
            family(name, "gauge", help, metrics.compactMap { m in value(m).map { (label("source", m.status.source.name), $0) } })
        }
        gauge("last_success_timestamp_seconds", "Unix time of the source's last successful sync.") { seconds($0.status.lastSuccessAt) }
        gauge("added_timestamp_seconds", "Unix time the source was added: beside no last success, how long it has gone without one.") { seconds($0.addedAt) }
        gauge("last_attempt_timestamp_seconds", "Unix time of the source's last sync attempt.") { seconds($0.status.lastAttemptAt) }
        gauge("next_attempt_timestamp_seconds", "Unix time before which cron's sync --if-stale leaves a failing source alone.") {
            seconds($0.status.nextAttemptAt)
        }
        gauge("consecutive_failures", "Failed syncs since the last success.") { Double($0.consecutiveFailures) }
        gauge("rows", "Rows cached for the source.") { Double($0.status.rows) }
        gauge("stale_rows", "Cached rows upstream has not confirmed within the source's TTL.") { Double($0.status.staleRows) }
        gauge("stale", "1 when the source's last success is older than its TTL, or it never succeeded.") { $0.status.stale ? 1 : 0 }
        gauge("held", "1 while the removal guard holds the source's syncs ('cache sync NAME --accept-removals' applies the held one).") {
            $0.status.isHeld ? 1 : 0
        }
        gauge("search_index_damaged", "1 when a sync could not update the source's search index ('cache reindex' mends it).") {
            $0.status.indexDamagedAt == nil ? 0 : 1
        }
        family("outbox_edits", "gauge", "Local edits not yet applied, by state: queued (or in flight), conflict, rejected (or blocked).",
               metrics.filter { $0.status.source.kind.keepsRecords }.flatMap { m in
            [("queued", m.status.queuedEdits), ("conflict", m.status.conflictedEdits), ("rejected", m.status.rejectedEdits)].map { state, count in
                (label("source", m.status.source.name) + "," + label("state", state), Double(count))
            }
        })
        gauge("outbox_oldest_edit_age_seconds", "How long the oldest local edit not yet applied has waited.") { m in
            m.status.oldestEditAt.flatMap(Timestamp.parse).map { max(0, -$0.timeIntervalSinceNow) }
        }
        gauge("last_sync_duration_seconds", "How long the source's last sync took.") { $0.lastSyncSeconds }
        gauge("last_sync_bytes", "Body bytes of the source's last sync.") { $0.lastSyncBytes.map(Double.init) }
        gauge("last_http_status", "HTTP status of the source's last sync.") { $0.lastHTTPStatus.map(Double.init) }
        family("sync_runs_total", "counter", "Sync runs recorded, by outcome.", metrics.flatMap { m in
            ["updated", "unchanged", "failed", "held", "skipped"].map { outcome in
                (label("source", m.status.source.name) + "," + label("outcome", outcome), Double(m.runsByOutcome[outcome] ?? 0))
            }
        })
        return out
    }

    private static func seconds(_ timestamp: String?) -> Double? {
        timestamp.flatMap(Timestamp.parse).map { $0.timeIntervalSince1970 }
    }

    /// A label with its value escaped as the format asks: backslash, double quote, newline.
    private static func label(_ name: String, _ value: String) -> String {
        let escaped = value.replacingScalars { $0 == "\\" ? "\\\\" : $0 == "\"" ? "\\\"" : $0 == "\n" ? "\\n" : nil }
        return "\(name)=\"\(escaped)\""
    }

    private static func number(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
