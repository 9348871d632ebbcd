import FoundationEssentials
import OfflineCache

/// What every command needs: where the database is, the environment, and where to write.
struct Context {
    let databasePath: String
    let environment: [String: String]
    let console: Console

    /// Opens the database; `create` for commands that may make it.
    func open(create: Bool) throws(CacheError) -> CacheDatabase {
        try CacheDatabase(path: databasePath, create: create)
    }

    /// For commands that only read: a read-only connection (see `CacheDatabase.Access.read`).
    func openForReading() throws(CacheError) -> CacheDatabase {
        try CacheDatabase(path: databasePath, access: .read)
    }

    /// The same, or nil when there is no database file yet (nothing is created).
    func openForReadingIfPresent() throws(CacheError) -> CacheDatabase? {
        FileManager.default.fileExists(atPath: databasePath) ? try openForReading() : nil
    }
}
