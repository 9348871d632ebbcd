/// What one sync of one source did: its outcome, the rows it wrote and, when it failed, why.
///
/// ```swift
/// let report = try cache.sync("bank")
/// switch report.outcome {
/// case .updated: print("\(report.counts.inserted) new, \(report.counts.updated) changed")
/// case .failed, .held: print(report.errorText ?? "failed")
/// default: print(report.outcome)
/// }
/// ```
public struct SyncReport: Sendable {
    /// How a sync ended, as `cache sync --json` spells it (`updated`, `unchanged`, …).
    ///
    /// ```swift
    /// if try cache.sync("bank").outcome == .held { print("removals held: run 'cache sync bank --accept-removals'") }
    /// ```
    public enum Outcome: String, Sendable {
        case updated, unchanged, failed, skipped
        /// The removal guard held it: nothing was written, and it waits for a person
        /// (`--accept-removals`), not for time.
        case held
        /// `sync --plan`: reconciled, reported and rolled back.
        case planned
    }

    /// Why a sync failed.
    ///
    /// ```swift
    /// if case .upstream(let error)? = try cache.sync("bank").failure { print("upstream: \(error)") }
    /// ```
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case upstream(CacheError.Upstream)
        case database(CacheError.Database)
        case source(CacheError)
        /// The removal guard held the sync: nothing was written.
        case held(source: String, reason: String)

        /// The upstream's failure, when it was one.
        public var upstream: CacheError.Upstream? {
            if case .upstream(let error) = self { error } else { nil }
        }

        public var description: String {
            switch self {
            case let .held(source, reason): "held: \(reason); nothing was written (run 'cache sync \(source) --accept-removals' to apply it)"
            case .upstream(let error): error.description
            case .database(let error): error.description
            case .source(let error): error.description
            }
        }
    }

    /// The source synced.
    public var source: String
    /// What the sync did.
    public var outcome: Outcome
    /// Rows inserted, updated and removed.
    public var counts = SyncReport.Counts()
    /// Upstream's last HTTP status.
    public var httpStatus: Int?
    /// Body bytes received.
    public var bytes: Int?
    /// Why it failed (nil when it did not).
    public var failure: Failure?
    /// Why a skipped source was skipped.
    public var note: String?
    /// Records (or CSV rows) that came more than once, the same each time: each was cached once.
    public var repeatedRecords = 0
    /// A `sync --if-stale` skipped while its source is still in trouble: the outage (or the
    /// hold) goes on, so the exit status a timer sees says so, as the failed sync's did.
    package var skippedWhile: Trouble?

    /// What a source is waiting out.
    package enum Trouble: String, Sendable {
        /// Backing off after failed syncs.
        case failing
        /// The removal guard held its last sync.
        case held
    }
    /// Whether the source had cached rows when the sync began (a failure then still leaves a preview).
    public var hadCachedRows = false
    /// How long it took, in milliseconds.
    public var durationMs = 0
    /// Requests made, retries included.
    public var attempts = 0
    /// Seconds this sync slept because upstream asked it to (Retry-After on 429, 503, ...).
    public var retryAfterWait: Double = 0
    /// After a failure: when `sync --if-stale` may try again.
    public var nextAttemptAt: String?
    /// `sync --plan`: what the sync would change (as `cache diff` reads the change log), and
    /// why the removal guard would hold it, if it would.
    package var plan: [ChangeRecord]?
    /// With a plan: why the removal guard would hold it.
    public var wouldHold: String?

    /// The failure as people read it, naming the retries: `HTTP 503 from … after 3 attempts`.
    /// At most `maxErrorCharacters` of upstream's words are kept: this text is stored in every
    /// failed run and printed by `status` and `history`.
    public var errorText: String? {
        guard let failure else { return nil }
        var text = failure.description
        if text.count > Self.maxErrorCharacters {
            text = "\(text.prefix(Self.maxErrorCharacters))… (\(text.utf8.count) bytes in all)"
        }
        return attempts > 1 ? "\(text) after \(attempts) attempts" : text
    }

    /// The longest error message kept in the run history.
    public static let maxErrorCharacters = 500
}

extension SyncReport {
    /// A sync that could not begin: `error` came before any run (an unknown source, a
    /// database that cannot be opened for writing).
    package init(failed source: String, _ error: Error) {
        self.init(source: source, outcome: .failed)
        failure = switch error {
        case let error as CacheError: .source(error)
        case let error as DatabaseError: .database(error)
        default: .source(.invalidSource("\(error)"))
        }
    }
}

extension SyncReport {
    /// Rows written by a reconcile.
    ///
    /// ```swift
    /// let counts = try cache.sync("bank").counts
    /// print(counts.inserted, counts.updated, counts.deleted, counts.total)
    /// ```
    public struct Counts: Sendable, Equatable {
        /// Rows new to the cache.
        public var inserted = 0
        /// Rows whose fields changed.
        public var updated = 0
        /// Rows upstream no longer has, removed.
        public var deleted = 0
        /// Counts of a reconcile.
        public init(inserted: Int = 0, updated: Int = 0, deleted: Int = 0) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }
        /// Every row the reconcile changed.
        public var total: Int { inserted + updated + deleted }
    }
}

/// The engine's name for it; an app sees `SyncReport.Counts`.
package typealias ChangeCounts = SyncReport.Counts
