import FoundationEssentials
import OfflineCache

/// What every command needs: where the database is, the environment, and where to write.
struct Context {
    /// Every `--db` (one unless a reading command was given several: see `Shards`).
    let databasePaths: [String]
    var databasePath: String { databasePaths[0] }
    /// Several files read as one cache: always read-only.
    var isSharded: Bool { databasePaths.count > 1 }
    let environment: [String: String]
    let console: Console
    /// `--read-only` or `CACHE_READ_ONLY=1`, or a file Litestream follows (`replica`): a
    /// replica's reader. Reads serve what is there and start nothing; commands that write
    /// refuse; no file is created or changed.
    var readOnly = false
    /// The mark of Litestream's follower beside the file (`FILE-txid`), when there is one
    /// (for several files, read-only already, nil).
    var replica: String?
    /// The network every sync this command runs fetches through: libcurl and files (`Fetcher`),
    /// or a test's canned responses.
    let fetcher: any Fetching
    /// How a read starts the refresh behind it: a detached `cache sync` process, or a test's
    /// sync in this process.
    let refreshLauncher: RefreshLauncher

    init(databasePaths: [String], environment: [String: String], console: Console, readOnly: Bool,
         fetcher: any Fetching = Fetcher(), refreshLauncher: RefreshLauncher = .process) {
        self.databasePaths = databasePaths
        self.environment = environment
        self.console = console
        self.fetcher = fetcher
        self.refreshLauncher = refreshLauncher
        replica = databasePaths.count == 1 ? LitestreamReplica.mark(of: databasePaths[0]) : nil
        self.readOnly = readOnly || replica != nil || databasePaths.count > 1
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
        if readOnly { throw .readOnly(path: databasePath, reason: "--read-only or CACHE_READ_ONLY=1 is set, and this command writes; run it where the cache is written (the primary)") }
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

    /// For commands that read one source: the file that holds it (of several, see `Shards`).
    func openForReading(source: String) throws -> CacheDatabase {
        isSharded ? try Shards(paths: databasePaths).holding(source).database : try openForReading()
    }

    /// For commands that read every source: each file (of several, see `Shards`).
    func openEveryFile() throws -> [Shards.File] {
        if isSharded { return try Shards(paths: databasePaths).files }
        return [try file(openForReading())]
    }

    /// The same, or none when the one file is not there yet (nothing is created).
    func openEveryFileIfPresent() throws -> [Shards.File] {
        if isSharded { return try Shards(paths: databasePaths).files }
        return try openForReadingIfPresent().map { [try file($0)] } ?? []
    }

    private func file(_ database: CacheDatabase) throws -> Shards.File {
        Shards.File(path: databasePath, database: database, sources: try SourceStore(database).all(), lag: ReplicaLag.of(database, readOnly: readOnly))
    }
}
