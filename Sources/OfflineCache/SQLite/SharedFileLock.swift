import CSQLite
import Glibc

/// SQLite's own SHARED lock on a database file, taken as its unix VFS takes it (a read lock on
/// the pending byte, then on the shared range, then the pending byte let go), and held until
/// released. An immutable connection takes no lock of its own: holding this beside it makes a
/// writer that follows SQLite's protocol (Litestream's follower applying pages, a checkpoint
/// at a last close) wait until the read is done.
final class SharedFileLock {
    private let fd: Int32

    /// SQLite's lock bytes (see `os_unix.c`): at 1 GiB, past any page a file this size uses.
    private static let pendingByte = off_t(0x4000_0000)
    private static let sharedFirst = pendingByte + 2
    private static let sharedSize = off_t(510)

    /// Waits up to `timeoutMs` for the lock, as SQLite's busy timeout would.
    init(path: String, timeoutMs: Int32 = 5000) throws(DatabaseError) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DatabaseError(extendedCode: SQLITE_CANTOPEN, message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutMs))
        while true {
            if Self.set(fd, F_RDLCK, Self.pendingByte, 1) {
                let shared = Self.set(fd, F_RDLCK, Self.sharedFirst, Self.sharedSize)
                _ = Self.set(fd, F_UNLCK, Self.pendingByte, 1)
                if shared { return }
            }
            guard ContinuousClock.now < deadline else {
                close(fd)
                throw DatabaseError(extendedCode: SQLITE_BUSY, message: "database is locked (\(path) is being written)")
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            nanosleep(&pause, nil)
        }
    }

    private static func set(_ fd: Int32, _ type: Int32, _ start: off_t, _ length: off_t) -> Bool {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = start
        lock.l_len = length
        return fcntl(fd, F_SETLK, &lock) == 0
    }

    deinit { close(fd) }  // closing the descriptor lets go of the lock
}
