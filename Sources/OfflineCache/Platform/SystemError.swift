#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error the operating system reported (`errno`): its number, and the C library's words for
/// it. Every call into the C library is made in this folder (`Platform/`), so a port to another
/// system changes these files alone. Each imports Darwin where there is no Glibc, but the folder
/// is built and tested on Linux only, and three parts are Linux's own, for a port to give
/// another way: the byte-range locks (`RangeLock`, Linux's OFD locks), and what `/proc` tells
/// (`LockHolder`, `ProgramLocation`, `Processes.isRunning`'s zombies).
package struct SystemError: Error, CustomStringConvertible, Sendable {
    package let code: Int32

    package init(code: Int32) { self.code = code }

    /// What the last failed call left in `errno`.
    package static var last: SystemError { SystemError(code: errno) }

    /// `strerror`: "No such file or directory".
    package var description: String { String(cString: strerror(code)) }

    package var isAlreadyThere: Bool { code == EEXIST }
    package var isInterrupted: Bool { code == EINTR }
    package var isPermissionDenied: Bool { code == EACCES }
    package var isReadOnlyFileSystem: Bool { code == EROFS }
    /// A process that exists but may not be signalled by this user.
    package var isNotPermitted: Bool { code == EPERM }
    /// The call does not apply to this file (`fsync` of a folder on some file systems).
    package var isInvalidArgument: Bool { code == EINVAL }
    /// The peer reset or aborted the connection, or closed it under a write.
    package var isConnectionLost: Bool { [ECONNRESET, EPIPE, ECONNABORTED].contains(code) }
}
