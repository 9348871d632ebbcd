import CSQLite
import FoundationEssentials

/// The cache's SQLite file: opened, configured, and migrated to this binary's schema.
///
/// The file is marked as the cache's (`PRAGMA application_id`), and only an empty file or one of
/// ours is ever migrated: pointed at someone else's database, cache refuses it and writes nothing.
package final class CacheDatabase {
    package let connection: Connection
    package let path: String
    /// The file `path` named when this was opened (looked at just before, so a file put in its
    /// place during the open reads as another: the safe side).
    package let identity: FileIdentity?

    /// Whether `path` still names the file this reads. After a move aside and a restore, or an
    /// atomic replace, it names another, which a long-lived reader (`cache serve`) must reopen;
    /// after a delete, none.
    package var isStillAtPath: Bool { identity != nil && FileIdentity.of(path) == identity }

    /// Read as a snapshot under a lock (see `Connection.readsASnapshot`): not to be kept.
    package var isSnapshot: Bool { connection.readsASnapshot }

    /// `PRAGMA application_id` of a cache database: "cach" in ASCII.
    package static let applicationID: Int32 = 0x6361_6368

    /// What a command does with the file.
    package enum Access: Sendable {
        /// Create the file and its folder when missing, and migrate it: commands that write.
        case create
        /// Migrate if needed, never create: commands that write to an existing cache.
        case write
        /// Only read: opened read-only, so a read-only mount or a full disk still serves the
        /// cache (migrated first, read-write, only when this binary's schema is newer).
        case read
        /// Only read, and change nothing: never created or migrated, opened so that SQLite
        /// creates no file (`Connection.readingWithoutCreating`): a replica Litestream keeps.
        case readOnly
    }

    package convenience init(path: String, create: Bool) throws(CacheError) {
        try self.init(path: path, access: create ? .create : .write)
    }

    /// Opens the database at `path`.
    ///
    /// - Throws: `CacheError`: `.noDatabase` for a missing file (unless `.create`), `.notACache`
    ///   for a file that is not ours, `.newerSchema` before anything is written.
    package init(path: String, access: Access) throws(CacheError) {
        self.path = path
        try Self.refuseIfNotAFile(path)
        let before = FileIdentity.of(path)
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: path) {
            guard access == .create else { throw .noDatabase(path: path) }
            let folder = Self.folder(of: path)
            if !folder.isEmpty && !fileManager.fileExists(atPath: folder) {
                do {
                    try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
                } catch {
                    throw .cannotCreate(path: path, reason: "cannot create its folder (\(Self.reason(error)))")
                }
            }
        }
        // A replica Litestream follows is read as in read-only mode, and never written.
        let replica = LitestreamReplica.mark(of: path)
        if let replica, access == .create || access == .write { throw .replica(path: path, mark: replica) }
        if access == .readOnly || replica != nil {
            connection = try Self.openReadOnly(path)
            identity = before
            return
        }
        if access == .read, let reader = try Self.openForReading(path) {
            connection = reader
            identity = before
            return
        }
        do {
            connection = try Connection(path: path)
            identity = before ?? FileIdentity.of(path)  // a file this open created
        } catch {
            let error = Self.explained(error, path: path)
            if access == .create && !error.isPermission && (error.primaryCode == SQLITE_CANTOPEN || error.primaryCode == SQLITE_PERM) {
                throw .cannotCreate(path: path, reason: error.message)
            }
            throw .database(error)
        }
        do {
            let kind = try Self.identify(connection, path: path)
            if kind == .empty && access == .read { throw CacheError.noDatabase(path: path) }
            let migrator = Migrator()
            try migrator.checkNotNewer(connection)
            try connection.configureForWriting()
            try migrator.migrate(connection)
            if kind != .marked { try connection.execute("PRAGMA application_id = \(Self.applicationID)") }
        } catch let error as CacheError {
            throw error
        } catch let error as Migrator.NewerSchemaError {
            throw .newerSchema(databaseVersion: error.databaseVersion, knownVersion: error.knownVersion)
        } catch let error as DatabaseError {
            throw .database(error)
        } catch {
            throw .database(DatabaseError(extendedCode: SQLITE_ERROR, message: "\(error)"))
        }
    }

    enum Kind {
        /// Marked with this project's application_id.
        case marked
        /// Made by a cache from before the mark (marked on its next write).
        case unmarked
        case empty
    }

    /// Ours (marked, or made by a cache from before the mark: its migrations table and
    /// `sources`), or an empty file; anything else is refused before a byte is written.
    static func identify(_ db: Connection, path: String) throws(CacheError) -> Kind {
        do {
            if try db.scalarInt("PRAGMA application_id") == Int64(applicationID) { return .marked }
            var tables = Set(try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) ?? "" })
            // Litestream's own tables (`_litestream_seq`, `_litestream_lock`) are its business: a
            // file it touched first is still an empty one, and they never make a cache foreign.
            tables = tables.filter { !$0.hasPrefix("_litestream_") }
            if tables.isEmpty { return .empty }
            if tables.isSuperset(of: ["schema_migrations", "sources", "sync_state"]) { return .unmarked }
            throw CacheError.notACache(path: path, reason: "it is another program's SQLite database")
        } catch let error as CacheError {
            throw error
        } catch let error as DatabaseError where error.primaryCode == SQLITE_NOTADB {
            throw .notACache(path: path, reason: "it is not an SQLite database")
        } catch let error as DatabaseError {
            throw .database(Self.explained(error, path: path))
        } catch {
            throw .database(DatabaseError(extendedCode: SQLITE_ERROR, message: "\(error)"))
        }
    }

    /// For the commands that read a file without opening it as a cache (`check`, `sql`): opened
    /// read-only (immutable where no -shm can be made, so a read-only mount or another user's
    /// folder is still read), and another
    /// program's SQLite file, or one that is not SQLite, is refused as every other command
    /// refuses it, and an empty file is no database yet.
    static func openForInspection(_ path: String, readOnly: Bool = false) throws(CacheError) -> Connection {
        guard FileSystem.exists(path) else { throw .noDatabase(path: path) }
        try refuseIfNotAFile(path)
        let db: Connection
        do {
            db = readOnly ? try Connection.readingWithoutCreating(path) : try Connection.reading(path)
        } catch where error.primaryCode == SQLITE_NOTADB {
            throw .notACache(path: path, reason: "it is not an SQLite database")
        } catch {
            throw .database(explained(error, path: path))
        }
        if try identify(db, path: path) == .empty { throw .noDatabase(path: path) }
        return db
    }

    /// Read-only mode's connection: a cache at this binary's schema, opened creating nothing; a
    /// file that needs a migration is refused (it is the primary's to migrate).
    static func openReadOnly(_ path: String) throws(CacheError) -> Connection {
        let connection = try openForInspection(path, readOnly: true)
        let (applied, latest) = try schemaVersions(connection, path: path)
        if applied < latest {
            throw .readOnly(path: path, reason: "its schema (version \(applied)) is older than this cache's (\(latest)), and a read-only cache is never migrated; run this version of cache on the primary first")
        }
        return connection
    }

    /// A read-only connection to a cache at this binary's schema (see `Connection.reading`), or
    /// nil when the file needs a migration first (the caller then opens it for writing).
    static func openForReading(_ path: String) throws(CacheError) -> Connection? {
        let connection: Connection
        do {
            connection = try Connection.reading(path)
        } catch {
            throw .database(explained(error, path: path))
        }
        guard try identify(connection, path: path) != .empty else { throw .noDatabase(path: path) }
        let (applied, latest) = try schemaVersions(connection, path: path)
        return applied == latest ? connection : nil
    }

    /// The file's schema version and this binary's; a newer file is refused, and nothing is written to it.
    private static func schemaVersions(_ connection: Connection, path: String) throws(CacheError) -> (applied: Int, latest: Int) {
        do {
            let applied = try Migrator.appliedVersion(connection)
            let latest = Migrator().latestVersion
            if applied > latest { throw CacheError.newerSchema(databaseVersion: applied, knownVersion: latest) }
            return (applied, latest)
        } catch let error as CacheError {
            throw error
        } catch let error as DatabaseError {
            throw .database(explained(error, path: path))
        } catch {
            throw .database(DatabaseError(extendedCode: SQLITE_ERROR, message: "\(error)"))
        }
    }

    /// SQLite says only "unable to open database file" (SQLITE_CANTOPEN) when the file exists
    /// but may not be read or written: told apart here, so it exits 77, not 74.
    static func explained(_ error: DatabaseError, path: String) -> DatabaseError {
        guard error.primaryCode == SQLITE_CANTOPEN, FileSystem.exists(path) else { return error }
        if FileSystem.refusal(reading: path)?.isPermissionDenied == true {
            return DatabaseError(extendedCode: SQLITE_PERM, message: "permission denied reading \(path)")
        }
        let folder = Self.folder(of: path)
        if let refusal = FileSystem.refusal(writing: path) ?? FileSystem.refusal(writing: folder.isEmpty ? "." : folder) {
            // A read-only mount is no matter of permission: say what it is, and how to read it.
            if refusal.isReadOnlyFileSystem {
                return DatabaseError(extendedCode: SQLITE_PERM, message: "\(path) is on a read-only file system, so nothing can be written there; read it with --read-only (or CACHE_READ_ONLY=1), and write where the file system is writable")
            }
            return DatabaseError(extendedCode: SQLITE_PERM, message: "permission denied writing \(path) or its folder")
        }
        return error
    }

    private static func reason(_ error: Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.underlying as? POSIXError {
            return SystemError(code: underlying.code.rawValue).description
        }
        return "\(error)"
    }

    /// Something other than a regular file at the path (a FIFO, a folder, a device, a socket) is
    /// no cache: refused before anything opens it, since opening a FIFO waits for a writer that
    /// may never come (a cron check pointed at the wrong path must alert, not hang). A link to
    /// a regular file is followed.
    static func refuseIfNotAFile(_ path: String) throws(CacheError) {
        guard let status = FileSystem.status(path) else { return }  // nothing there yet: the caller says what that means
        let what: String? = switch status.kind {
        case .regular: nil
        case .folder: "it is a folder"
        case .fifo: "it is a FIFO (a named pipe)"
        case .socket: "it is a socket"
        case .characterDevice, .blockDevice: "it is a device"
        default: "it is not a regular file"
        }
        if let what { throw .notACache(path: path, reason: what + "; point --db or CACHE_DB at the cache's SQLite file") }
    }

    /// The folder part of a path: `a/b/c` → `a/b`, `/c` → `/`, `c` → ``.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The default location: `$CACHE_DB`, else `$XDG_CACHE_HOME/cache/cache.sqlite3`,
    /// else `~/.cache/cache/cache.sqlite3`.
    package static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["CACHE_DB"], !path.isEmpty { return path }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/cache/cache.sqlite3" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileSystem.homeFolder ?? "/"
        return home + "/.cache/cache/cache.sqlite3"
    }
}

extension CocoaError {
    fileprivate var underlying: Error? { userInfo["NSUnderlyingError"] as? Error }
}

extension CacheError {
    /// One source name in two files read as one cache: a configuration to mend (78), naming both.
    package static func inTwoFiles(_ name: String, _ first: String, _ second: String) -> CacheError {
        .invalidSource("the source '\(name)' is in both \(first) and \(second): each source must be held by one file (its primary's) to read the files as one cache")
    }
}
