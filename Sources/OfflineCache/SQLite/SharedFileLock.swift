import CSQLite
import FoundationEssentials
import Synchronization

/// SQLite's own SHARED lock on a database file, taken as its unix VFS takes it (a read lock on
/// the pending byte, then on the shared range, then the pending byte let go), and held until
/// released. An immutable connection takes no lock of its own: holding this beside it makes a
/// writer that follows SQLite's protocol (Litestream's follower applying pages, a checkpoint
/// at a last close) wait until the read is done.
///
/// The lock is an open file description's (Linux's OFD lock) on the file's kept descriptor, not
/// the process's: SQLite closing the immutable connection's own descriptor would drop a POSIX
/// lock of this process, and this lock's letting go must not drop SQLite's. Every holder in the
/// process shares it; the last to let go unlocks. To another process it is a read lock like
/// SQLite's (OFD and POSIX locks conflict as locks of two processes do).
final class SharedFileLock {
    private let fd: Int32

    /// SQLite's lock bytes (see `os_unix.c`): at 1 GiB, past any page a file this size uses.
    private static let pendingByte: Int64 = 0x4000_0000
    private static let sharedFirst = pendingByte + 2
    private static let sharedSize: Int64 = 510
    /// Holders in this process, by kept descriptor.
    private static let holders = Mutex<[Int32: Int]>([:])

    /// Waits up to `timeoutMs` for the lock, as SQLite's busy timeout would.
    init(path: String, timeoutMs: Int32 = 5000) throws(DatabaseError) {
        guard let fd = KeptDescriptor.of(path) else {
            throw DatabaseError(extendedCode: SQLITE_CANTOPEN, message: "cannot open \(path): \(SystemError.last)")
        }
        self.fd = fd
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutMs))
        while !Self.holders.withLock({ holders in
            if holders[fd, default: 0] == 0 && !Self.lockShared(fd) { return false }
            holders[fd, default: 0] += 1
            return true
        }) {
            guard ContinuousClock.now < deadline else {
                throw DatabaseError(extendedCode: SQLITE_BUSY, message: "database is locked (\(path) is being written)")
            }
            sleepSeconds(0.02)
        }
    }

    private static func lockShared(_ fd: Int32) -> Bool {
        guard RangeLock.read(fd, start: pendingByte, length: 1) else { return false }
        let shared = RangeLock.read(fd, start: sharedFirst, length: sharedSize)
        RangeLock.release(fd, start: pendingByte, length: 1)
        return shared
    }

    deinit {
        Self.holders.withLock { holders in
            holders[fd, default: 1] -= 1
            if holders[fd] == 0 {
                holders[fd] = nil
                RangeLock.release(fd, start: Self.sharedFirst, length: Self.sharedSize)
            }
        }
    }
}
