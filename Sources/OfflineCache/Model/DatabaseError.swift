import CSQLite

extension CacheError {
    /// An error from SQLite: its extended result code, its message, and the SQL that failed.
    ///
    /// The description, which messages to people show, reads like
    /// `SQLite error 19: UNIQUE constraint failed: jokes.id`: no internal SQL. The debug description
    /// adds the statement's first line. Bound values are never part of either.
    ///
    /// ```swift
    /// if case .database(let error)? = try cache.sync("bank").failure, error.isBusy { print("another process is writing") }
    /// ```
    public struct Database: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
        /// The extended result code, such as 2067 (`SQLITE_CONSTRAINT_UNIQUE`).
        public let extendedCode: Int32
        /// SQLite's message.
        public let message: String
        /// The statement that failed, when there was one.
        public let sql: String?
        /// For a busy database: the process holding its write lock, in words (`pid 12 (cache sync
        /// bank)`), when another process holds it.
        public var lockHolder: String?
        /// The database file the connection that failed reads (its main file), when known: of
        /// several files read as one, the one that failed.
        public var file: String?

        /// An error with SQLite's extended result code.
        public init(extendedCode: Int32, message: String, sql: String? = nil) {
            self.extendedCode = extendedCode
            self.message = message
            self.sql = sql
        }

        /// The primary result code (the low byte of the extended one), such as `SQLITE_BUSY`.
        public var primaryCode: Int32 { extendedCode & 0xFF }

        /// I/O failures and damaged files, as opposed to mistakes in a statement.
        public var isCorruptionOrIO: Bool {
            [SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_FULL].contains(primaryCode)
        }

        /// A page of the file is damaged: SQLite's "database disk image is malformed".
        public var isMalformed: Bool { primaryCode == SQLITE_CORRUPT }

        /// Another connection held the lock for longer than the busy timeout.
        /// A row referred to one that is gone (a source removed by another process, say).
        var isForeignKeyViolation: Bool { extendedCode == 787 }  // SQLITE_CONSTRAINT_FOREIGNKEY, a macro Swift cannot import

        /// Another connection held the lock for longer than the busy timeout: try again.
        public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

        /// The file, or its folder, may not be read or written.
        public var isPermission: Bool {
            [SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH].contains(primaryCode)
                || (primaryCode == SQLITE_CANTOPEN && extendedCode != SQLITE_CANTOPEN)
        }

        public var description: String {
            guard primaryCode == SQLITE_BUSY else { return "SQLite error \(extendedCode): \(message)" }
            let holder = lockHolder.map { "another process, \($0), holds its write lock" } ?? "another connection holds a lock on it"
            return "the database is busy: \(holder); try again when it is done"
        }

        public var debugDescription: String {
            var text = description
            // The statement's first line, not a whole migration: a message is one line.
            if let sql {
                let first = sql.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                text += " - while executing `\(first.count > 80 ? first.prefix(80) + "…" : first)`"
            }
            return text
        }
    }
}

/// The engine's name for it; an app sees `CacheError.Database`.
package typealias DatabaseError = CacheError.Database
