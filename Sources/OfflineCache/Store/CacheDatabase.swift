import CSQLite
import Foundation

/// Why the cache's database could not be opened or used.
public enum CacheError: Error, Sendable, CustomStringConvertible {
    case noDatabase(path: String)
    case cannotCreate(path: String, reason: String)
    case newerSchema(Migrator.NewerSchemaError)
    case database(DatabaseError)
    case noSuchSource(String)
    case noSuchRun(Int, source: String)
    /// The source was removed, or removed and added again, while it synced.
    case sourceReplaced(String)
    case sourceExists(String)
    /// A source definition that cannot be used, such as an unsafe URL scheme.
    case invalidSource(String)

    public var description: String {
        switch self {
        case let .noDatabase(path): "no database at \(path) yet; add a source first with 'cache sources add'"
        case let .cannotCreate(path, reason): "cannot create the database at \(path): \(reason)"
        case let .newerSchema(error): "\(error)"
        case let .database(error): "\(error)"
        case let .noSuchSource(name): "no source named '\(name)'"
        case let .sourceReplaced(name): "the source '\(name)' was removed or replaced during the sync; nothing was written"
        case let .noSuchRun(id, source): "no sync run \(id) of '\(source)' (see 'cache history \(source)')"
        case let .sourceExists(name): "a source named '\(name)' already exists; remove it first"
        case let .invalidSource(reason): reason
        }
    }
}

/// The cache's SQLite file: opened, configured, and migrated to this binary's schema.
public final class CacheDatabase {
    public let connection: Connection
    public let path: String

    /// Opens the database at `path`.
    ///
    /// - Parameter create: create the file and its folder when missing (commands that write);
    ///   otherwise a missing file throws `CacheError.noDatabase`.
    /// - Throws: `CacheError`; a database from a newer cache is refused before anything is written.
    public init(path: String, create: Bool) throws(CacheError) {
        self.path = path
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: path) {
            guard create else { throw .noDatabase(path: path) }
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty && !fileManager.fileExists(atPath: folder) {
                do {
                    try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
                } catch {
                    throw .cannotCreate(path: path, reason: "cannot create its folder (\(Self.reason(error)))")
                }
            }
        }
        do {
            connection = try Connection(path: path)
        } catch {
            let error = Self.explained(error, path: path)
            if create && !error.isPermission && (error.primaryCode == SQLITE_CANTOPEN || error.primaryCode == SQLITE_PERM) {
                throw .cannotCreate(path: path, reason: error.message)
            }
            throw .database(error)
        }
        do {
            let migrator = Migrator()
            try migrator.checkNotNewer(connection)
            try connection.configureForWriting()
            try migrator.migrate(connection)
        } catch let error as Migrator.NewerSchemaError {
            throw .newerSchema(error)
        } catch let error as DatabaseError {
            throw .database(error)
        } catch {
            throw .database(DatabaseError(extendedCode: SQLITE_ERROR, message: "\(error)"))
        }
    }

    /// SQLite says only "unable to open database file" (SQLITE_CANTOPEN) when the file exists
    /// but may not be read or written: told apart here, so it exits 77, not 74.
    static func explained(_ error: DatabaseError, path: String) -> DatabaseError {
        guard error.primaryCode == SQLITE_CANTOPEN, access(path, F_OK) == 0 else { return error }
        if access(path, R_OK) != 0 && errno == EACCES {
            return DatabaseError(extendedCode: SQLITE_PERM, message: "permission denied reading \(path)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        if access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            return DatabaseError(extendedCode: SQLITE_PERM, message: "permission denied writing \(path) or its folder")
        }
        return error
    }

    private static func reason(_ error: Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.underlying as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        return (error as NSError).localizedDescription
    }

    /// The default location: `$CACHE_DB`, else `$XDG_CACHE_HOME/cache/cache.sqlite3`,
    /// else `~/.cache/cache/cache.sqlite3`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["CACHE_DB"], !path.isEmpty { return path }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/cache/cache.sqlite3" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.cache/cache/cache.sqlite3"
    }
}

extension CocoaError {
    fileprivate var underlying: Error? { userInfo[NSUnderlyingErrorKey] as? Error }
}
