/// A database file's size and modification time, and its `-wal`'s: what changes when anyone
/// writes it, for a reader that cannot watch `PRAGMA data_version` (a snapshot connection sees
/// no commit, and is not kept: see `Connection.readsASnapshot`).
package enum FileChangeMark {
    package static func of(_ path: String) -> String {
        ["", "-wal"].map { suffix in
            guard let status = FileSystem.status(path + suffix) else { return "-" }
            return "\(status.identity.inode).\(status.size).\(status.modified.seconds).\(status.modified.nanoseconds)"
        }.joined(separator: "/")
    }
}
