import FoundationEssentials
import OfflineCache

/// What every command needs: where the database is, the environment, and where to write.
struct Context {
    let databasePath: String
    let environment: [String: String]
    let console: Console
    /// `--read-only` or `CACHE_READ_ONLY=1`, or a file Litestream follows (`replica`): a
    /// replica's reader. Reads serve what is there and start nothing; commands that write
    /// refuse; no file is created or changed.
    var readOnly = false
    /// The mark of Litestream's follower beside the file (`FILE-txid`), when there is one.
    var replica: String?

    init(databasePath: String, environment: [String: String], console: Console, readOnly: Bool) {
        self.databasePath = databasePath
        self.environment = environment
        self.console = console
        replica = LitestreamReplica.mark(of: databasePath)
        self.readOnly = readOnly || replica != nil
    }

    /// Whether the environment asks for read-only mode: `CACHE_READ_ONLY` set to anything but
    /// empty, `0`, `false` or `no` (a mistyped value errs on the side of writing nothing).
    static func readOnly(in environment: [String: String]) -> Bool {
        let value = (environment["CACHE_READ_ONLY"] ?? "").trimmingWhitespace().lowercased()
        return !["", "0", "false", "no"].contains(value)
    }

    /// Opens the database to write; `create` for commands that may make it. Refused in read-only mode.
    func open(create: Bool) throws(CacheError) -> CacheDatabase {
        if let replica { throw .replica(path: databasePath, mark: replica) }
        if readOnly { throw .readOnly(path: databasePath, reason: "this command writes; run it where the cache is written (the primary)") }
        return try CacheDatabase(path: databasePath, create: create)
    }

    /// For commands that only read: a read-only connection (see `CacheDatabase.Access.read`, and
    /// `.readOnly` in read-only mode).
    func openForReading() throws(CacheError) -> CacheDatabase {
        try CacheDatabase(path: databasePath, access: readOnly ? .readOnly : .read)
    }

    /// The same, or nil when there is no database file yet (nothing is created).
    func openForReadingIfPresent() throws(CacheError) -> CacheDatabase? {
        FileManager.default.fileExists(atPath: databasePath) ? try openForReading() : nil
    }
}
