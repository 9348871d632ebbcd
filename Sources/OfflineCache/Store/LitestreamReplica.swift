
/// A file that Litestream's follower keeps (`litestream restore -f`): it writes `FILE-txid`
/// beside the file, naming the last transaction it applied, and keeps it while it follows and
/// after (a follower started again resumes from it). Such a file is a replica: its pages are the
/// primary's, replaced under any writer, so a write here diverges from the primary until
/// Litestream's next update undoes it. The cache treats it as read-only without being told.
package enum LitestreamReplica {
    /// The follower's mark beside `path` (`path-txid`, a regular file), or nil for a file no
    /// follower keeps.
    package static func mark(of path: String) -> String? {
        let mark = path + "-txid"
        guard FileSystem.status(mark)?.kind == .regular else { return nil }
        return mark
    }
}
