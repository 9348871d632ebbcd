import CSQLite
import FoundationEssentials

/// A value bound to a statement parameter.
package enum SQLValue: Sendable, Equatable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
}

extension SQLValue {
    package static func int(_ value: Int) -> SQLValue { .int(Int64(value)) }
    package static func optionalText(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    package static func optionalInt(_ value: Int?) -> SQLValue { value.map { .int(Int64($0)) } ?? .null }
}

/// A prepared statement. Owned by its connection; not `Sendable`.
extension JSONValue {
    /// A column value as JSON: integers, reals, text and null.
    package init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .int(let v): self = .int(Int(v))
        case .double(let v): self = .double(v)
        case .text(let v): self = .string(v)
        }
    }
}

package final class Statement {
    private let handle: OpaquePointer
    private unowned let connection: Connection
    package let sql: String

    init(connection: Connection, sql: String) throws(DatabaseError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw connection.error(sql: sql)
        }
        self.handle = statement
        self.connection = connection
        self.sql = sql
    }

    private init(handle: OpaquePointer, connection: Connection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    /// Prepares the first statement of `sql` and returns it with the rest of the text (trimmed),
    /// for callers that must see whether a second statement follows.
    static func prepareFirst(connection: Connection, sql: String) throws(DatabaseError) -> (Statement, String) {
        var statement: OpaquePointer?
        var tail = ""
        let code = sql.withCString { text -> Int32 in
            var rest: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(connection.handle, text, -1, &statement, &rest)
            if let rest { tail = String(cString: rest) }
            return code
        }
        guard code == SQLITE_OK else { throw connection.error(sql: sql) }
        guard let statement else { throw DatabaseError(extendedCode: SQLITE_MISUSE, message: "no statement to run", sql: sql) }
        let rest = tail.trimmed { $0.properties.isWhitespace || $0 == ";" }
        return (Statement(handle: statement, connection: connection, sql: sql), rest)
    }

    /// Whether SQLite says the statement makes no direct change to the database file.
    package var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// The virtual-machine steps its runs have taken so far (`SQLITE_STMTSTATUS_VM_STEP`): how
    /// much a query read, in a count that the machine's load does not change.
    package var virtualMachineSteps: Int { Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_VM_STEP, 0)) }

    deinit { sqlite3_finalize(handle) }

    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Makes the statement ready to run again, keeping its bindings.
    package func rewind() {
        sqlite3_reset(handle)
    }

    /// Binds `values` to parameters 1...n, after a reset.
    /// The highest parameter number the statement has (`?4` makes 4, used or not before it).
    package var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    package func bind(_ values: [SQLValue]) throws(DatabaseError) {
        sqlite3_reset(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .int(let v): code = sqlite3_bind_int64(handle, index, v)
            case .double(let v): code = sqlite3_bind_double(handle, index, v)
            case .text(let v): code = Self.bindText(handle, index, v)
            }
            guard code == SQLITE_OK else { throw connection.error(sql: sql) }
        }
    }

    // Binding one parameter at a time, for hot loops that must not build an array per row.
    // Parameters are numbered from 1. Text is copied by SQLite (SQLITE_TRANSIENT).

    package func bind(_ index: Int32, _ value: String) throws(DatabaseError) {
        guard Self.bindText(handle, index, value) == SQLITE_OK else { throw connection.error(sql: sql) }
    }

    /// Text bound with its byte length, not -1: a NUL inside upstream text is data, and a
    /// NUL-terminated bind would cut the value there.
    private static func bindText(_ handle: OpaquePointer?, _ index: Int32, _ value: String) -> Int32 {
        var value = value
        return value.withUTF8 { bytes in
            // An empty buffer may have no address, and a NULL pointer would bind NULL.
            guard bytes.count > 0 else { return sqlite3_bind_text(handle, index, "", 0, csqlite_transient) }
            return bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), csqlite_transient)
            }
        }
    }

    package func bind(_ index: Int32, _ value: Int) throws(DatabaseError) {
        guard sqlite3_bind_int64(handle, index, Int64(value)) == SQLITE_OK else { throw connection.error(sql: sql) }
    }

    package func bind(_ index: Int32, _ value: Double) throws(DatabaseError) {
        guard sqlite3_bind_double(handle, index, value) == SQLITE_OK else { throw connection.error(sql: sql) }
    }

    /// Text given as UTF-8 bytes, for values built on the stack (dates, ids).
    package func bind(_ index: Int32, utf8 bytes: UnsafeBufferPointer<UInt8>) throws(DatabaseError) {
        let code = bytes.withMemoryRebound(to: CChar.self) {
            sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), csqlite_transient)
        }
        guard code == SQLITE_OK else { throw connection.error(sql: sql) }
    }

    /// Text given as UTF-8 bytes that SQLite reads in place, with no copy (SQLITE_STATIC): they
    /// must stay as they are until the statement has run and its parameters are bound again or
    /// cleared (`clearBindings`). For loads that bind many rows from one buffer.
    package func bind(_ index: Int32, kept bytes: UnsafeBufferPointer<UInt8>) throws(DatabaseError) {
        // An empty buffer may have no address, and a NULL pointer would bind NULL.
        let code = bytes.isEmpty ? sqlite3_bind_text(handle, index, "", 0, csqlite_transient) : bytes.withMemoryRebound(to: CChar.self) {
            sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), nil)
        }
        guard code == SQLITE_OK else { throw connection.error(sql: sql) }
    }

    /// Every parameter back to NULL: no binding points at bytes about to be freed.
    package func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Runs a write with the parameters bound so far, then resets it for the next row.
    package func execute() throws(DatabaseError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Advances to the next row; false when there is none.
    package func step() throws(DatabaseError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps until the statement is done (for writes).
    package func runToEnd() throws(DatabaseError) {
        while try step() {}
    }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }
    package func columnName(_ index: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(index))) }
    package func isNull(_ index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }
    package func int64(_ index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }
    package func int(_ index: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(index))) }
    package func double(_ index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    package func text(_ index: Int) -> String? {
        guard let bytes = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's text as bytes, valid only inside `body`: for reading without a String.
    package func withText<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let pointer = sqlite3_column_text(handle, Int32(index))
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return try body(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// A column as SQLite stored it, its text read in place (valid only inside `withColumn`).
    package enum Column {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeBufferPointer<UInt8>)
    }

    /// The column as SQLite stored it, without building a String: for output by the million rows.
    package func withColumn<R>(_ index: Int, _ body: (Column) throws -> R) rethrows -> R {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_NULL: return try body(.null)
        case SQLITE_INTEGER: return try body(.integer(int64(index)))
        case SQLITE_FLOAT: return try body(.real(double(index)))
        default: return try withText(index) { try body(.text($0)) }
        }
    }

    /// The column as the value SQLite stored, for generic output such as `cache sql`.
    package func value(_ index: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: return .int(int64(index))
        case SQLITE_FLOAT: return .double(double(index))
        case SQLITE_NULL: return .null
        default: return text(index).map { .text($0) } ?? .null
        }
    }
}
