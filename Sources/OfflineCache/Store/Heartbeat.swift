import FoundationEssentials

/// The primary's heartbeat (`heartbeat`, one row): every `cache sync` on a writable cache stamps
/// it, and it replicates with the file, so a read-only follower can tell how far behind its
/// primary it is (`lagSeconds`).
package struct Heartbeat {
    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }

    /// Stamps `now`: one row rewritten, nothing else touched.
    package func beat(at now: String = Timestamp.now()) throws(DatabaseError) {
        try db.run("INSERT INTO heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at", [.text(now)])
    }

    /// When the newest heartbeat this file holds was stamped (on the primary's clock); nil before any.
    package func latest() throws(DatabaseError) -> String? {
        try db.scalarText("SELECT at FROM heartbeat WHERE id = 1")
    }

    /// Seconds from the newest heartbeat to now (on this machine's clock): how far behind its
    /// primary a follower is, at most; negative when the heartbeat is stamped in this machine's
    /// future (the primary's clock runs ahead). Nil before any heartbeat.
    package func lagSeconds(now: Date = Date()) throws(DatabaseError) -> Double? {
        try latest().flatMap(Timestamp.parse).map { now.timeIntervalSince($0) }
    }
}
