import CSQLite

/// A WAL database's shared-memory index, for its newest commit: read without a
/// transaction, a lock or a system call, the way SQLite's readers read it before they choose
/// their snapshot. Two reads that give the same `Commit` saw no commit between them (a
/// checkpoint's restart of the WAL changes it too: a change seen, never one missed).
///
/// `cache serve` gives a kept page while the commit is the one it was made after. It holds a
/// connection of its own: the index is mapped for that connection's life. Nil for a file that
/// is not in WAL mode (a follower's rollback journal, an immutable read).
package final class WALIndex: @unchecked Sendable {
    /// The WAL-index header's 48 bytes.
    package struct Commit: Equatable, Sendable {
        fileprivate var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

        package static func == (lhs: Commit, rhs: Commit) -> Bool { lhs.words == rhs.words }
    }

    /// Held, never read: the index is mapped for as long as it is open.
    private let connection: Connection
    private let index: UnsafePointer<UInt8>
    /// The file this watches (`FileIdentity.of(path)` differs once the path names another),
    /// looked at just before it was opened: a file put in its place meanwhile reads as another.
    package let identity: FileIdentity?

    package init?(path: String) {
        let identity = FileIdentity.of(path)
        guard let connection = try? Connection(path: path, readOnly: true),
              (try? connection.scalarText("PRAGMA journal_mode")) == "wal",
              (try? connection.scalarInt("SELECT count(*) FROM sqlite_schema")) != nil,
              let index = csqlite_wal_index(connection.handle) else { return nil }
        self.connection = connection
        self.identity = identity
        // Read only through `csqlite_wal_index_header`, which reads it as shared memory.
        self.index = index
    }

    /// The newest commit; nil while a writer is updating the index (read again, or read the
    /// database).
    package func newestCommit() -> Commit? {
        var commit = Commit()
        let agreed = withUnsafeMutableBytes(of: &commit.words) { out in
            csqlite_wal_index_header(index, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return agreed == 1 ? commit : nil
    }
}
