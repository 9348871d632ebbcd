import FoundationEssentials

/// The per-source lease that keeps syncs of one source from overlapping, across processes.
///
/// It lives in SQLite (`sync_leases`), the one state every `cache` process shares. Taking it is
/// one `BEGIN IMMEDIATE` transaction, so two processes cannot both see it free.
package struct SyncLease {
    package enum Acquisition: Equatable {
        case acquired(token: String)
        /// A live process holds it.
        case held(pid: Int32)
    }

    let db: Connection

    package init(_ database: CacheDatabase) { db = database.connection }
    init(db: Connection) { self.db = db }

    /// Takes the lease for `source` unless a live holder has it; a dead or expired holder's
    /// lease is taken over.
    package func acquire(_ source: String, for seconds: Double) throws -> Acquisition {
        try db.inTransaction {
            if let holder = try currentHolder(source) { return .held(pid: holder) }
            let token = UUID().uuidString
            let now = Date()
            try db.run("""
                INSERT INTO sync_leases (source, holder_pid, holder_token, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (source) DO UPDATE SET holder_pid = excluded.holder_pid, holder_token = excluded.holder_token,
                    acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
                """, [.text(source), .int(Int64(Processes.current)), .text(token), .text(Timestamp.format(now)),
                      .text(Timestamp.format(now.addingTimeInterval(seconds)))])
            return .acquired(token: token)
        }
    }

    /// Gives the lease back, if this holder still has it.
    package func release(_ source: String, token: String) {
        try? db.run("DELETE FROM sync_leases WHERE source = ? AND holder_token = ?", [.text(source), .text(token)])
    }

    /// One hold of a source's lease: who holds it, and the token that tells it from the holds
    /// before and after it (the same process syncing the source again takes a new one).
    package struct Hold: Equatable, Sendable {
        package let pid: Int32
        package let token: String
        /// When it was taken (`Timestamp`'s text).
        package let acquiredAt: String
    }

    /// The leases live processes hold now, by source: the syncs in flight.
    package func holds() throws -> [String: Hold] {
        let rows = try db.query("""
            SELECT source, holder_pid, holder_token, acquired_at FROM sync_leases WHERE expires_at > ?
            """, [.text(Timestamp.now())]) {
            (source: $0.text(0) ?? "", hold: Hold(pid: Int32($0.int(1)), token: $0.text(2) ?? "", acquiredAt: $0.text(3) ?? ""))
        }
        return Dictionary(rows.filter { Self.isAlive($0.hold.pid) }.map { ($0.source, $0.hold) }, uniquingKeysWith: { first, _ in first })
    }

    /// The pid of the live process holding the lease of `source`, if any.
    package func currentHolder(_ source: String) throws -> Int32? {
        let rows = try db.query("""
            SELECT holder_pid, expires_at > ? FROM sync_leases WHERE source = ?
            """, [.text(Timestamp.now()), .text(source)]) { (pid: Int32($0.int(0)), unexpired: $0.int(1) != 0) }
        guard let lease = rows.first, lease.unexpired, Self.isAlive(lease.pid) else { return nil }
        return lease.pid
    }

    /// Whether `pid` is a running process (a zombie, dead but not yet reaped, is not).
    static func isAlive(_ pid: Int32) -> Bool { Processes.isRunning(pid) }
}
