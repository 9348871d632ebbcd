import Glibc

/// A database file's size and modification time, and its `-wal`'s: what changes when anyone
/// writes it, for a reader that cannot watch `PRAGMA data_version` (a snapshot connection sees
/// no commit, and is not kept: see `Connection.readsASnapshot`).
package enum FileChangeMark {
    package static func of(_ path: String) -> String {
        ["", "-wal"].map { suffix in
            var info = stat()
            return stat(path + suffix, &info) == 0 ? "\(info.st_ino).\(info.st_size).\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : "-"
        }.joined(separator: "/")
    }
}
