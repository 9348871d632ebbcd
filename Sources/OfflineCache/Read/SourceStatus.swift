extension Source {
    /// One source's state, as `cache status` shows it.
    ///
    /// ```swift
    /// for status in try cache.status() where status.stale { print("\(status.source.name): \(status.lastError ?? "stale")") }
    /// ```
    public struct Status: Sendable {
        /// The source.
        public var source: Source
        /// Rows cached.
        public var rows: Int
        /// Cached rows upstream has not confirmed within the TTL.
        public var staleRows: Int
        /// Never synced, or the last success is older than the TTL.
        public var stale: Bool
        /// When its last successful sync ended (ISO 8601, UTC).
        public var lastSuccessAt: String?
        /// When its last sync attempt ended.
        public var lastAttemptAt: String?
        /// The last run's outcome (`updated`, `unchanged`, `failed`, `held`, …).
        public var lastOutcome: String?
        /// The last failed run's error.
        public var lastError: String?
        /// While it backs off after failures, the time before which `sync --if-stale` leaves it alone.
        public var nextAttemptAt: String?
        /// Seconds since the last success.
        public var ageSeconds: Int?
        /// For an incremental source: the largest cursor field cached, and its last full sync.
        public var watermark: String?
        /// An incremental source: when its last full sync ended.
        public var lastFullAt: String?
        /// Since when a sync could not bring the search index up to date, and why: its rows are
        /// cached and current, its search results out of step until `cache reindex`.
        public var indexDamagedAt: String?
        /// What went wrong with its search index, when something did.
        public var indexDamage: String?

        /// Local edits waiting to reach the upstream: queued or in flight (`cache outbox` lists them).
        public var queuedEdits = 0
        /// Local edits in conflict with a change upstream, waiting for `cache outbox resolve`.
        public var conflictedEdits = 0
        /// Local edits the upstream refused, and those blocked behind them.
        public var rejectedEdits = 0
        /// When the oldest local edit not yet applied was made (ISO 8601, UTC).
        public var oldestEditAt: String?

        /// The removal guard held the last sync: it waits for a person (`--accept-removals`).
        public var isHeld: Bool { lastOutcome == "held" }
    }
}

/// The engine's name for it; an app sees `Source.Status`.
package typealias SourceStatus = Source.Status
