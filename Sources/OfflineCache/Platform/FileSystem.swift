#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files by their paths and descriptors, as the C library sees them: what is at a path, whether
/// this user may read or write it, and the few changes made without Foundation (a link that
/// fails when the name is taken, an `fsync`, a private umask).
package enum FileSystem {
    package enum Kind: Sendable, Equatable {
        case regular, folder, symbolicLink, fifo, socket, characterDevice, blockDevice, other
    }

    /// What `stat` says of a file.
    package struct Status: Sendable {
        package let kind: Kind
        package let size: Int
        package let identity: FileIdentity
        /// Its last change, to the nanosecond the file system keeps.
        package let modified: (seconds: Int, nanoseconds: Int)

        init(_ info: stat) {
            kind = switch info.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .folder
            case S_IFLNK: .symbolicLink
            case S_IFIFO: .fifo
            case S_IFSOCK: .socket
            case S_IFCHR: .characterDevice
            case S_IFBLK: .blockDevice
            default: .other
            }
            size = Int(info.st_size)
            identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            #if canImport(Darwin)
            modified = (Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec))
            #else
            modified = (Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec))
            #endif
        }
    }

    /// The file at `path`, a link followed; nil when there is none (or it cannot be looked at).
    package static func status(_ path: String) -> Status? {
        var info = stat()
        return stat(path, &info) == 0 ? Status(info) : nil
    }

    /// The file at `path` itself, a link not followed (`lstat`).
    package static func linkStatus(_ path: String) -> Status? {
        var info = stat()
        return lstat(path, &info) == 0 ? Status(info) : nil
    }

    /// The file an open descriptor reads.
    package static func status(descriptor: Int32) -> Status? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Status(info) : nil
    }

    /// Whether anything is at `path` (`access(F_OK)`: a dangling link is nothing).
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Why this user may not read `path`; nil when it may.
    package static func refusal(reading path: String) -> SystemError? { access(path, R_OK) == 0 ? nil : .last }

    /// Why this user may not write `path`; nil when it may.
    package static func refusal(writing path: String) -> SystemError? { access(path, W_OK) == 0 ? nil : .last }

    /// Removes the name `path`, if it is there.
    package static func remove(_ path: String) { unlink(path) }

    /// A second name for a file, which fails when `path` is taken (a rename would replace it).
    package static func makeLink(to existing: String, at path: String) throws(SystemError) {
        guard link(existing, path) == 0 else { throw .last }
    }

    package static func setPermissions(_ path: String, _ mode: UInt32) throws(SystemError) {
        guard chmod(path, mode_t(mode)) == 0 else { throw .last }
    }

    /// `fsync`s a file or a folder, so it and its names survive a crash. A file system that
    /// cannot sync a folder (`EINVAL`) is no failure.
    package static func syncToDisk(_ path: String) throws(SystemError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 || SystemError.last.isInvalidArgument else { throw .last }
    }

    /// Runs `body` with the umask at 077, so the files it creates are this user's alone.
    package static func withPrivateUmask<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = umask(0o077)
        defer { umask(previous) }
        return try body()
    }

    /// Opens `path` to read, closed on exec; without blocking when asked (a FIFO with no writer
    /// is then only looked at). Nil when it cannot be opened.
    package static func openForReading(_ path: String, blocking: Bool = true) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (blocking ? 0 : O_NONBLOCK))
        return descriptor >= 0 ? descriptor : nil
    }

    package static func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }

    /// Reads up to `buffer.count` bytes; 0 at the end. An interrupted read is read again.
    package static func readSome(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            let error = SystemError.last
            if !error.isInterrupted { throw error }
        }
    }

    /// `count` bytes at `offset` (`pread`, which moves no file position); nil when fewer are there.
    package static func readBytes(_ descriptor: Int32, count: Int, at offset: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        return pread(descriptor, &bytes, count, off_t(offset)) == count ? bytes : nil
    }

    /// This user's home folder from the user database, for when HOME is not set.
    package static var homeFolder: String? {
        getpwuid(getuid())?.pointee.pw_dir.map { String(cString: $0) }
    }
}
