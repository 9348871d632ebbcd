/// One source's state, as `cache status` shows it.
///
/// ```swift
/// for status in try cache.status() where status.stale { print("\(status.source.name): \(status.lastError ?? "stale")") }
/// ```
public struct SourceStatus: Sendable {
    public var source: Source
    public var rows: Int
    public var staleRows: Int
    /// Never synced, or the last success is older than the TTL.
    public var stale: Bool
    public var lastSuccessAt: String?
    public var lastAttemptAt: String?
    public var lastOutcome: String?
    public var lastError: String?
    public var nextAttemptAt: String?
    /// Seconds since the last success.
    public var ageSeconds: Int?
    /// For an incremental source: the largest cursor field cached, and its last full sync.
    public var watermark: String?
    public var lastFullAt: String?
    /// Since when a sync could not bring the search index up to date, and why: its rows are
    /// cached and current, its search results out of step until `cache reindex`.
    public var indexDamagedAt: String?
    public var indexDamage: String?

    /// The removal guard held the last sync: it waits for a person (`--accept-removals`).
    public var isHeld: Bool { lastOutcome == "held" }
}
