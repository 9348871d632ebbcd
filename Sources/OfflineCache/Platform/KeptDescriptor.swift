#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// One read-only descriptor per database file (by device and inode), for this process's own
/// looks at a file SQLite may also have open: its header, and the shared lock beside an
/// immutable read. Kept open for the process's life, never closed: closing any descriptor of a
/// file drops every POSIX lock this process holds on it, SQLite's own read locks on other
/// connections included (a writer in another process, Litestream's follower, could then write
/// pages under a read).
enum KeptDescriptor {
    private static let open = Locked<[FileIdentity: Int32]>([:])

    /// The descriptor of the file at `path` now (a file put in its place is another file), or
    /// nil with `errno` set when it cannot be opened.
    static func of(_ path: String) -> Int32? {
        guard let identity = FileIdentity.of(path) else { return nil }
        return open.withLock { kept -> Int32? in
            if let fd = kept[identity] { return fd }
            guard let fd = FileSystem.openForReading(path) else { return nil }
            // Named by what was opened: the path may have been given another file meanwhile.
            guard let key = FileIdentity.of(descriptor: fd) else { return fd }
            if let earlier = kept[key] { return earlier }  // this one stays open, unused (see above)
            kept[key] = fd
            return fd
        }
    }
}
