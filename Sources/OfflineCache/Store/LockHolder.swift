import FoundationEssentials
import Glibc

/// Who holds a WAL database's write lock, for a message better than "database is locked".
///
/// In WAL mode SQLite's writer holds a POSIX lock on byte 120 of the `-shm` file
/// (`WAL_WRITE_LOCK`); `F_GETLK` names the process holding it. A lock held by this very process
/// is not reported (POSIX locks belong to the process), nor one on a filesystem without locks.
enum LockHolder {
    /// "pid 1234 (cache sync bank)", or nil when no other process holds the write lock.
    static func describe(databaseFile path: String) -> String? {
        guard !path.isEmpty, let pid = writer(of: path) else { return nil }
        return "pid \(pid)" + (commandLine(of: pid).map { " (\($0))" } ?? "")
    }

    static func writer(of path: String) -> pid_t? {
        let fd = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 120
        lock.l_len = 1
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK), lock.l_pid > 0 else { return nil }
        return lock.l_pid
    }

    /// The program's name and arguments, as `ps` shows them, cut to a readable length.
    static func commandLine(of pid: pid_t) -> String? {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        var words = buffer[..<count].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard !words.isEmpty else { return nil }
        // The program by its name, not its whole path; arguments as given.
        words[0] = words[0].split(separator: "/").last.map(String.init) ?? words[0]
        let text = words.joined(separator: " ").map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 ? " " : $0 }
        let line = String(text)
        return line.count > 80 ? String(line.prefix(79)) + "…" : line
    }
}
