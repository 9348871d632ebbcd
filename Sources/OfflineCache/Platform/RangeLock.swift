#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Read locks on byte ranges of a file, held by its open file description (Linux's OFD locks,
/// `F_OFD_SETLK`) rather than by the process: closing another descriptor of the same file does
/// not drop them. To another process they conflict as POSIX locks do. Linux's alone: Darwin has
/// no OFD locks, and 37 is Linux's number for the command.
package enum RangeLock {
    /// `F_OFD_SETLK` (Linux 3.15), which the Glibc module leaves out without _GNU_SOURCE.
    private static let setOFDLock: Int32 = 37

    /// Takes a read lock on `length` bytes from `start`, without waiting; false when a writer holds them.
    package static func read(_ fd: Int32, start: Int64, length: Int64) -> Bool { set(fd, F_RDLCK, start, length) }

    /// Lets go of the bytes from `start`.
    package static func release(_ fd: Int32, start: Int64, length: Int64) { _ = set(fd, F_UNLCK, start, length) }

    private static func set(_ fd: Int32, _ type: Int32, _ start: Int64, _ length: Int64) -> Bool {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        lock.l_pid = 0  // an OFD lock's, always
        return fcntl(fd, setOFDLock, &lock) == 0
    }
}
