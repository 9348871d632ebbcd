import CSQLite

extension Connection {
    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock up front, so two writers queue on the busy
    /// timeout instead of failing halfway. If `body` or the commit throws, the transaction is
    /// rolled back and the *first* error is rethrown, never the rollback's.
    public func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction("BEGIN IMMEDIATE", body)
    }

    /// Runs `body` inside one read transaction, so every query in it sees the same snapshot
    /// (in WAL mode a writer's commit in between is invisible to it). Inside a transaction
    /// already, it reads in that one: its snapshot is the one asked for.
    public func inReadTransaction<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(handle) == 0 { return try body() }
        return try transaction("BEGIN DEFERRED", body)
    }

    /// Runs `body`, which opens its own transactions, with foreign keys not enforced, then as they
    /// were. The setting cannot change inside a transaction, so it changes here, around them.
    /// For writes whose parent row the caller checks once itself inside its transaction: SQLite
    /// looking the parent up again for each row cost half a second over a sync's million rows.
    func withoutForeignKeys<T>(_ body: () throws -> T) throws -> T {
        let enforced = try scalarInt("PRAGMA foreign_keys") == 1
        if enforced { try execute("PRAGMA foreign_keys=OFF") }
        defer { if enforced { try? execute("PRAGMA foreign_keys=ON") } }
        return try body()
    }

    /// A transaction that meets SQLITE_SCHEMA (another process changed the schema, such as a
    /// `sources remove` dropping its view, and SQLite could not prepare a statement again) is
    /// rolled back whole and run again: the second run is the same as a first one. At most 3 runs.
    private func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        var runs = 0
        while true {
            runs += 1
            try execute(begin)
            do {
                let result = try body()
                try execute("COMMIT")
                return result
            } catch {
                if sqlite3_get_autocommit(handle) == 0 {
                    try? execute("ROLLBACK")
                }
                if let error = error as? DatabaseError, error.primaryCode == SQLITE_SCHEMA, runs < 3 { continue }
                throw error
            }
        }
    }
}
