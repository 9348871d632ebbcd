/// Writes a validated payload into the cache. Runs inside the caller's transaction.
///
/// `replace` inserts new rows, updates changed ones and deletes absent ones; identical rows
/// are not rewritten (the source's `confirmed_at` vouches for them). `merge` inserts or
/// updates by id and stamps every returned row's `seen_at`, and never deletes. Every change
/// is logged; rows loaded into an empty cache are logged as one load.
struct Reconciler {
    let db: Connection
    let source: Source
    let now: String
    /// The run whose change log entries this reconcile writes.
    let runID: Int64
    var progress: (@Sendable (SyncProgress) -> Void)? = nil

    /// Records one change in the change log.
    func log(_ kind: String, _ id: String, _ change: String, before: JSONValue?, after: JSONValue?) throws {
        try db.run("""
            INSERT INTO changes (run_id, source, row_kind, row_id, change, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.int(runID), .text(source.name), .text(kind), .text(id), .text(change),
                  .optionalText(before?.text), .optionalText(after?.text)])
    }

    /// Returns the row counts and whether anything at all (the account header included) changed.
    /// Each storage's reconcile lives in its kind's folder.
    func apply(_ payload: Payload) throws -> (counts: ChangeCounts, changed: Bool) {
        switch payload {
        case .account(let account): return try applyAccount(account)
        case .jokes(let jokes):
            let counts = try applyJokes(jokes)
            return (counts, counts.total > 0)
        case .records(let set):
            let counts = try applyRecords(set)
            return (counts, counts.total > 0)
        }
    }

    var merging: Bool { source.mode == .merge }

    /// How a load into an empty table begins its many-row `INSERT`s. A reconcile runs inside the
    /// sync's transaction, which any error rolls back whole, so a failing statement's own rows
    /// need no undoing of their own: `OR FAIL` says so, and SQLite keeps no statement journal
    /// (as long as foreign keys are off, as they are for the sync's transaction: their checks
    /// would want one again). With a plain `INSERT`, each 100-row statement first copied every
    /// page it changed into one, a temporary file written and never read (figures:
    /// docs/performance.md).
    static let loadInsert = "INSERT OR FAIL INTO"
}
