import FoundationEssentials

/// Notices what other processes write to a cache file, for a reader that follows it (`cache
/// serve`'s events, the library's `SourceModel`): one watcher, with one set of rules.
///
/// - A kept connection's `PRAGMA data_version` moves when another connection commits, and
///   costs no read of the tables.
/// - Where no connection is kept — a snapshot (a WAL file with neither side file, read as
///   immutable, which sees no commit and whose lock would hold Litestream's follower off for
///   good), or a reader that keeps none — the file's marks (size, time, its `-wal`'s) do.
/// - The file's identity: a file put where the first one was (a restore after damage, an atomic
///   replace) is another file, noticed at the next look, and read from then on.
package struct CommitWatch {
    /// What a look found changed: the database to read it from (kept, or opened for this look),
    /// and whether it is another file than the last look's.
    package struct Change {
        package let database: CacheDatabase
        package let anotherFile: Bool
    }

    package let path: String
    private let access: CacheDatabase.Access
    private let keepsConnection: Bool
    private var kept: CacheDatabase?
    /// The file the last look read.
    private var file: FileIdentity?
    private var mark: String?

    /// Watching from now: the first `look()` reports what changes after this (unless forced).
    /// `opened`: a connection the caller already has, kept when it may be.
    package init(path: String, access: CacheDatabase.Access, keepsConnection: Bool = true, opened: CacheDatabase? = nil) {
        self.path = path
        self.access = access
        self.keepsConnection = keepsConnection
        let database = opened ?? (keepsConnection ? try? CacheDatabase(path: path, access: access) : nil)
        kept = keepsConnection && database?.isSnapshot == false ? database : nil
        file = database?.identity ?? FileIdentity.of(path)
        mark = Self.mark(kept, path: path)
    }

    /// What moves when the file changes.
    private static func mark(_ kept: CacheDatabase?, path: String) -> String? {
        guard let kept else { return FileChangeMark.of(path) }
        return (try? kept.connection.scalarInt("PRAGMA data_version")).map { "version \($0)" }
    }

    /// Looks once: nil when nothing changed since the last look (`force`: look as if it had).
    package mutating func look(force: Bool = false) -> Change? {
        // The path names another file, or none: what the kept connection reads is gone for
        // everyone else; follow the path.
        if let current = kept, !current.isStillAtPath { kept = nil }
        let now = Self.mark(kept, path: path)
        guard let now, now != mark || force else { return nil }
        mark = now
        guard let database = kept ?? (try? CacheDatabase(path: path, access: access)) else { return nil }
        if keepsConnection && kept == nil && !database.isSnapshot {
            kept = database  // no longer a snapshot (a follower's first update): watched by its data_version
            mark = Self.mark(kept, path: path)
        }
        let anotherFile = database.identity != file
        file = database.identity
        return Change(database: database, anotherFile: anotherFile)
    }

    /// The last look's read failed: the next look reads again, changed or not.
    package mutating func retry() {
        mark = nil
    }
}
