import FoundationEssentials
import CSQLite

/// One query from a person, run so that it cannot change the database: the file is opened
/// read-only, an authorizer refuses every action that writes (ATTACH, writing PRAGMAs and
/// CTEs that write included), and a statement SQLite does not call read-only is refused.
package struct ReadOnlyQuery {
    /// A statement that would write, or more than one statement.
    package struct Refused: Error, CustomStringConvertible, Sendable {
        package let reason: String
        package var description: String { reason }
    }

    let connection: Connection

    /// Opens `path` read-only; a missing file throws `CacheError.noDatabase`, another program's
    /// file `.notACache`.
    package init(path: String, creatingNothing: Bool = false) throws(CacheError) {
        try self.init(paths: [path], creatingNothing: creatingNothing)
    }

    /// Several caches read as one, each file holding its own sources: the first is `main`, the
    /// others are attached as `db2`, `db3`, …, and each source's views (`cached_NAME` and its
    /// list views) are reached by their names alone, from the file that holds them. The
    /// bookkeeping tables (`sources`, `sync_runs`, …) are each file's: `db2.sources`.
    package init(paths: [String], creatingNothing: Bool = false) throws(CacheError) {
        connection = try CacheDatabase.openForInspection(paths[0], readOnly: creatingNothing || paths.count > 1)
        for (index, path) in paths.enumerated().dropFirst() {
            let schema = "db\(index + 1)"
            do {
                _ = try CacheDatabase.openForInspection(path, readOnly: true)
                try connection.attachWithoutCreating(path, as: schema)
                // Temporary views, in memory: the files are not written. The main file's own views
                // come first in name lookup only after temp ones, so a view both files have (none
                // should: each source is in one) would be this one's.
                let views = try connection.query("SELECT name FROM \(schema).sqlite_schema WHERE type = 'view' AND name NOT IN (SELECT name FROM main.sqlite_schema) AND name NOT IN (SELECT name FROM temp.sqlite_schema)") { $0.text(0) ?? "" }
                for view in views {
                    let quoted = "\"" + view.replacingScalars { $0 == "\"" ? "\"\"" : nil } + "\""
                    try connection.execute("CREATE TEMP VIEW \(quoted) AS SELECT * FROM \(schema).\(quoted)")
                }
            } catch let error as CacheError {
                throw error
            } catch let error as DatabaseError {
                throw .database(CacheDatabase.explained(error, path: path))
            } catch {
                throw .database(DatabaseError(extendedCode: SQLITE_ERROR, message: "\(error)"))
            }
        }
        sqlite3_set_authorizer(connection.handle, readOnlyAuthorizer, nil)
    }

    /// Runs `sql`, handing the column names and then each row to `row`.
    package func run(_ sql: String, columns: ([String]) -> Void, row: (Statement) throws -> Void) throws {
        let prepared: Result<(Statement, String), DatabaseError>
        do { prepared = .success(try Statement.prepareFirst(connection: connection, sql: sql)) } catch { prepared = .failure(error) }
        let (statement, tail): (Statement, String)
        switch prepared {
        case .success(let value): (statement, tail) = value
        // A denied action fails the prepare with SQLITE_AUTH (or, for schema changes, SQLITE_SCHEMA
        // after SQLite's retry), always with the message "not authorized".
        // SQLite refuses a write to its schema table itself, before the authorizer is asked.
        case .failure(let error) where error.primaryCode == SQLITE_AUTH || error.message == "not authorized"
            || error.message.hasSuffix("may not be modified"):
            throw Refused(reason: "refused: the statement would change the database (\(error.message)); cache sql only reads")
        // Empty text, or only comments: a mistake in the command, not a damaged database.
        case .failure(let error) where error.primaryCode == SQLITE_MISUSE:
            throw Refused(reason: "refused: no SQL statement to run")
        case .failure(let error): throw error
        }
        guard tail.isEmpty else { throw Refused(reason: "refused: give one statement at a time") }
        guard statement.isReadOnly else { throw Refused(reason: "refused: the statement would change the database; cache sql only reads") }
        columns((0..<statement.columnCount).map(statement.columnName))
        while try statement.step() { try row(statement) }
    }
}

/// PRAGMAs that only read, with or without an argument.
private let introspectionPragmas: Set<String> = [
    "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check",
]
/// PRAGMAs that only read when given no value (with one, several of them write).
private let readingPragmas: Set<String> = [
    "user_version", "schema_version", "application_id", "journal_mode", "page_size", "page_count",
    "freelist_count", "encoding", "data_version", "compile_options", "database_list", "table_list",
    "function_list", "pragma_list", "collation_list", "module_list", "foreign_keys",
]

/// The authorizer: reading, functions and recursive CTEs pass; everything else is denied.
private let readOnlyAuthorizer: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?,
                                                UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32 = {
    _, action, first, second, _, _ in
    switch action {
    case SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE:
        return SQLITE_OK
    case SQLITE_UPDATE where first.map({ String(cString: $0) }) == "sqlite_master":
        // A table-valued function (json_each, json_tree) declares its columns with a CREATE TABLE
        // that SQLite authorizes as an update of sqlite_master. A statement that really writes
        // it is still refused: it is not read-only, and the connection is opened read-only.
        return SQLITE_OK
    case SQLITE_PRAGMA:
        let name = first.map { String(cString: $0).lowercased() } ?? ""
        if introspectionPragmas.contains(name) { return SQLITE_OK }
        return second == nil && readingPragmas.contains(name) ? SQLITE_OK : SQLITE_DENY
    default:
        return SQLITE_DENY
    }
}
