import CSQLite
import FoundationEssentials

/// One open SQLite database.
///
/// Deliberately not `Sendable`: a connection belongs to one thread of work at a time.
/// Statements run through it are prepared once and cached by their SQL text.
package final class Connection {
    let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    /// The shared lock an immutable read-only connection holds (see `readingWithoutCreating`);
    /// let go after the connection closes.
    private var heldLocks: [SharedFileLock] = []

    /// Whether this connection reads its file as one that cannot change, under a shared lock
    /// held for its life (see `readingWithoutCreating`): it sees no later commit, and a writer
    /// that follows SQLite's protocol waits for it to close. Keep such a connection for one
    /// piece of work, never in a pool.
    package var readsASnapshot: Bool { !heldLocks.isEmpty }

    /// Opens (and, unless `readOnly`, creates) the database at `path`.
    ///
    /// A new file is created with mode 0600: the process umask is narrowed while SQLite
    /// creates it, so the file is never visible with wider permissions.
    /// - Parameter immutable: read the file as one that cannot change (SQLite's `immutable=1`):
    ///   no locks and no shared-memory file, for a read-only mount.
    package init(path: String, readOnly: Bool = false, immutable: Bool = false, busyTimeoutMs: Int32 = 5000) throws(DatabaseError) {
        var db: OpaquePointer?
        var flags = readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // Every connection takes URIs (a read-only one for the files it attaches, see
        // `attachWithoutCreating`), so its own path is given as one: a file named `file:x` is
        // that file, whatever SQLite was built to do with such names.
        flags |= SQLITE_OPEN_URI
        let name = Self.uri(path, immutable: immutable)
        _ = Self.processSettings
        let code = FileSystem.withPrivateUmask { sqlite3_open_v2(name, &db, flags, nil) }
        guard let db else {
            throw DatabaseError(extendedCode: code, message: "cannot open \(path)")
        }
        guard code == SQLITE_OK else {
            let error = DatabaseError(extendedCode: sqlite3_extended_errcode(db),
                                      message: String(cString: sqlite3_errmsg(db)))
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMs)
        addFunctions()
    }

    /// How long a statement waits for another connection's write lock before SQLITE_BUSY.
    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// A read-only connection that has read the schema. Where SQLite cannot make the
    /// shared-memory file a WAL database needs (a read-only mount, a full disk), the file is
    /// opened as immutable instead: nothing can be changing it there while it is read.
    package static func reading(_ path: String) throws(DatabaseError) -> Connection {
        let connection = try Connection(path: path, readOnly: true)
        do {
            _ = try connection.scalarInt("SELECT count(*) FROM sqlite_schema")
            return connection
        } catch where [SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL].contains(error.primaryCode) {
            let immutable = try Connection(path: path, readOnly: true, immutable: true)
            _ = try immutable.scalarInt("SELECT count(*) FROM sqlite_schema")
            return immutable
        }
    }

    /// Opens `path` read-only so that SQLite creates no file and reads a consistent file:
    /// - in rollback mode (how Litestream's follower keeps a file once it has updated it), or in
    ///   WAL mode with its `-wal` and `-shm` there (a live writer's), an ordinary read-only
    ///   connection, which takes SQLite's read locks and creates nothing (a WAL reader marks its
    ///   place in the existing `-shm`, as every reader does);
    /// - in WAL mode with neither side file (a restored copy, a follower before its first
    ///   update, a primary nobody has open), immutable, since a WAL reader would otherwise make
    ///   `-shm` and `-wal` — under SQLite's own shared lock, held for the connection's life, so
    ///   a writer that follows SQLite's protocol waits for the read;
    /// - in WAL mode with commits in its `-wal` but no `-shm`, or a `-shm` but no `-wal`, refused:
    ///   only a writer can recover it.
    ///
    /// An empty `-wal` is a `-wal`: every ordinary read leaves one beside its `-shm` (a read-only
    /// connection cannot delete them), and that pair is read with the ordinary locks. An empty
    /// `-wal` alone holds nothing, so the file is read as if it had neither.
    package static func readingWithoutCreating(_ path: String) throws(DatabaseError) -> Connection {
        if let lock = try immutableReadLock(path) {
            let immutable = try Connection(path: path, readOnly: true, immutable: true)
            immutable.heldLocks.append(lock)
            _ = try immutable.scalarInt("SELECT count(*) FROM sqlite_schema")
            return immutable
        }
        let connection = try Connection(path: path, readOnly: true)
        _ = try connection.scalarInt("SELECT count(*) FROM sqlite_schema")
        return connection
    }

    /// Attaches `path` as `schema`, read-only and read as `readingWithoutCreating` reads a file
    /// (immutably when it is a WAL file with neither side file), so that nothing is created.
    package func attachWithoutCreating(_ path: String, as schema: String) throws(DatabaseError) {
        let lock = try Self.immutableReadLock(path)
        try run("ATTACH DATABASE ?1 AS \"\(schema)\"", [.text(Self.uri(path, immutable: lock != nil) + (lock == nil ? "?mode=ro" : "&mode=ro"))])
        if let lock { heldLocks.append(lock) }
    }

    /// Whether `readingWithoutCreating` reads `path` immutably: a WAL file with neither side file
    /// (then the shared lock it reads under), else nil; one side file without the other is refused.
    private static func immutableReadLock(_ path: String) throws(DatabaseError) -> SharedFileLock? {
        guard isWALFile(path) else { return nil }
        if !FileSystem.exists(path + "-shm") && !hasContent(path + "-wal") {
            let lock = try SharedFileLock(path: path)
            // Looked at again under the lock: a writer may have opened the file meanwhile.
            if !hasContent(path + "-wal") && !FileSystem.exists(path + "-shm") { return lock }
        }
        let sides = (wal: FileSystem.exists(path + "-wal"), shm: FileSystem.exists(path + "-shm"))
        if sides.wal != sides.shm {
            throw DatabaseError(extendedCode: SQLITE_CANTOPEN,
                                message: "\(path) has its \(sides.wal ? "-wal" : "-shm") file but not its \(sides.wal ? "-shm" : "-wal"): only a writer can recover that; open it once without --read-only")
        }
        return nil
    }

    /// `path` as a `file:` URI, percent-encoded where a URI needs it; `?immutable=1` when asked.
    /// An absolute path gets an empty authority (`file:///…`), so `//x` is not read as a host.
    private static func uri(_ path: String, immutable: Bool) -> String {
        (path.hasPrefix("/") ? "file://" : "file:") + path.percentEncoded { String.isUnreserved($0) || $0 == UInt8(ascii: "/") }
            + (immutable ? "?immutable=1" : "")
    }

    /// Whether a side file is there with something in it (an empty `-wal` is as good as none).
    private static func hasContent(_ path: String) -> Bool {
        (FileSystem.status(path)?.size ?? 0) > 0
    }

    /// Whether the file's header says WAL mode (bytes 18 and 19 are 2).
    /// (Read through the file's kept descriptor: closing one of its own would let go of the
    /// read locks this process's other connections hold on it.)
    private static func isWALFile(_ path: String) -> Bool {
        guard let fd = KeptDescriptor.of(path) else { return false }
        guard let header = FileSystem.readBytes(fd, count: 20, at: 0) else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// SQLite's process-wide settings, made once before the first open.
    private static let processSettings: Void = { _ = csqlite_disable_memory_statistics() }()

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Applies the settings every read-write connection of this project uses.
    package func configureForWriting() throws(DatabaseError) {
        // 16 KiB pages for a new file (a no-op once it has tables or is in WAL mode): large loads
        // are quicker than with 4 KiB pages, and reads touch few pages either way (figures:
        // docs/performance.md).
        try execute("PRAGMA page_size=16384")
        let mode = try scalarText("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw DatabaseError(extendedCode: SQLITE_ERROR,
                                message: "journal_mode answered \(mode ?? "nothing"), not wal",
                                sql: "PRAGMA journal_mode=WAL")
        }
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    func error(sql: String?) -> DatabaseError {
        explained(DatabaseError(extendedCode: sqlite3_extended_errcode(handle),
                                message: String(cString: sqlite3_errmsg(handle)),
                                sql: sql))
    }

    /// An error names its file; a busy one, the process holding the write lock.
    private func explained(_ error: DatabaseError) -> DatabaseError {
        guard let file = sqlite3_db_filename(handle, "main").map({ String(cString: $0) }), !file.isEmpty else { return error }
        var error = error
        error.file = file
        if error.primaryCode == SQLITE_BUSY { error.lockHolder = LockHolder.describe(databaseFile: file) }
        return error
    }

    /// Runs one or more statements that take no parameters and return nothing of interest.
    package func execute(_ sql: String) throws(DatabaseError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw explained(DatabaseError(extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql))
        }
    }

    /// A prepared statement for `sql`, reused across calls.
    package func cachedStatement(_ sql: String) throws(DatabaseError) -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs `sql` with `values` bound in order, for writes.
    package func run(_ sql: String, _ values: [SQLValue] = []) throws(DatabaseError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        try statement.runToEnd()
    }

    /// Every row of `sql`, each decoded by `row`.
    package func query<T>(_ sql: String, _ values: [SQLValue] = [],
                         row: (Statement) throws -> T) throws -> [T] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }  // a statement left mid-rows would hold a read transaction open
        try statement.bind(values)
        var rows: [T] = []
        while try statement.step() {
            rows.append(try row(statement))
        }
        return rows
    }

    /// The first column of the first row, as text.
    package func scalarText(_ sql: String, _ values: [SQLValue] = []) throws(DatabaseError) -> String? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// The first column of the first row, as an integer.
    package func scalarInt(_ sql: String, _ values: [SQLValue] = []) throws(DatabaseError) -> Int64? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// The rowid of the last row inserted through this connection.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }
}
