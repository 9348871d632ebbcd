import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who holds a database's write lock, for a message better than "database is locked".
///
/// In WAL mode SQLite's writer holds a POSIX lock on byte 120 of the `-shm` file
/// (`WAL_WRITE_LOCK`); in rollback mode, on the database file's pending byte. The holder is read from `/proc/locks`, matched by the file's device and
/// inode: the `-shm` file itself is never opened here, because closing any descriptor of a file
/// drops every POSIX lock this process holds on it, SQLite's own included. A lock held by this
/// very process is not reported.
enum LockHolder {
    /// "pid 1234 (cache sync bank)", or nil when no other process holds the write lock.
    static func describe(databaseFile path: String) -> String? {
        guard !path.isEmpty, let pid = writer(of: path) else { return nil }
        return "pid \(pid)" + (commandLine(of: pid).map { " (\($0))" } ?? "")
    }

    /// The other process holding the write lock: in WAL mode byte 120 of the `-shm`; in rollback
    /// mode (a Litestream follower's file) the database file's own pending byte (0x40000000),
    /// which a writer holds while it waits for the readers to finish and then writes.
    static func writer(of path: String) -> pid_t? {
        if let pid = holder(of: path + "-shm", covering: 120) { return pid }
        return FileSystem.exists(path + "-shm") ? nil : holder(of: path, covering: 0x4000_0000)
    }

    private static func holder(of path: String, covering byte: Int) -> pid_t? {
        guard let identity = FileIdentity.of(path), let locks = read("/proc/locks", limit: 1 << 20) else { return nil }
        // /proc/locks names a file as MAJOR:MINOR:INODE, the device numbers in hex.
        let device = identity.device
        let major = (device >> 8) & 0xFFF | ((device >> 32) & ~0xFFF), minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        func hex(_ value: UInt64) -> String { let text = String(value, radix: 16); return text.count < 2 ? "0" + text : text }
        let file = "\(hex(major)):\(hex(minor)):\(identity.inode)"
        // "1: POSIX  ADVISORY  WRITE 18602 fe:00:16220814 120 120"
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[1] == "POSIX", fields[3] == "WRITE", fields[5] == file,
                  let start = Int(fields[6]), let pid = pid_t(fields[4]), pid != getpid() else { continue }
            let end = Int(fields[7]) ?? Int.max  // "EOF" for a lock to the end of the file
            if start <= byte && byte <= end { return pid }
        }
        return nil
    }

    /// The program's name and arguments, as `ps` shows them, cut to a readable length.
    static func commandLine(of pid: pid_t) -> String? {
        guard let bytes = read("/proc/\(pid)/cmdline", limit: 512), !bytes.isEmpty else { return nil }
        var words = bytes.split(separator: "\0").map(String.init)
        guard !words.isEmpty else { return nil }
        // The program by its name, not its whole path; arguments as given.
        words[0] = words[0].split(separator: "/").last.map(String.init) ?? words[0]
        let line = String(words.joined(separator: " ").map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 ? " " : $0 })
        return line.count > 80 ? String(line.prefix(79)) + "…" : line
    }

    /// Up to `limit` bytes of a /proc file, as text.
    private static func read(_ path: String, limit: Int) -> String? {
        guard let fd = FileSystem.openForReading(path) else { return nil }
        defer { FileSystem.closeDescriptor(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var text: [UInt8] = []
        while text.count < limit {
            let count = (try? buffer.withUnsafeMutableBytes { try FileSystem.readSome(fd, into: $0) }) ?? 0
            guard count > 0 else { break }
            text.append(contentsOf: buffer[..<count])
        }
        return String(decoding: text.prefix(limit), as: UTF8.self)
    }
}
