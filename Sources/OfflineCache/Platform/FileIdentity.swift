/// Which file a path names: its device and inode. A file moved aside or deleted keeps its
/// identity while the path comes to name another file (a restore put in its place, an atomic
/// replace) or none; a connection opened before still reads the old one.
package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The file at `path` now; nil when there is none (or it cannot be looked at).
    package static func of(_ path: String) -> FileIdentity? { FileSystem.status(path)?.identity }

    /// The file an open descriptor reads.
    static func of(descriptor: Int32) -> FileIdentity? { FileSystem.status(descriptor: descriptor)?.identity }
}
