import FoundationEssentials
import Glibc
import OfflineCache

/// `cache metrics`: every source's freshness and sync figures in the Prometheus text exposition
/// format, on stdout or, with `--textfile`, into a file for node_exporter's textfile collector
/// (written beside it and renamed over it, so the collector never reads half a file).
enum MetricsCommand {
    static func run(textfile: String?, _ context: Context) throws -> Int32 {
        let files = try context.openEveryFile()
        let text = MetricsExposition.text(try files.map { try MetricsExposition.part(of: $0.database, readOnly: context.readOnly, several: files.count > 1) })
        guard let textfile else {
            context.console.out(text)
            return ExitCode.success
        }
        try writeReplacing(textfile, Array(text.utf8))
        return ExitCode.success
    }

    /// Writes `bytes` beside `path` and renames them over it, so a reader sees the old file or
    /// the new one, never half. Only a regular file is replaced: a FIFO, a device or a folder
    /// at the path is refused. A symlink is followed: its target is replaced, the link stays.
    /// On any failure (a full disk, say) the temporary file is removed and one line says why.
    static func writeReplacing(_ path: String, _ bytes: [UInt8]) throws(CacheError) {
        var target = path
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            guard let resolved = realpath(path, nil) else {
                throw .cannotWrite(path: path, reason: "it is a symlink to \(String(cString: strerror(errno)).lowercased())")
            }
            target = String(cString: resolved)
            free(resolved)
        }
        if stat(target, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw .cannotWrite(path: path, reason: "it exists and is not a regular file; only a regular file is replaced")
        }
        let temporary = target + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .cannotWrite(path: path, reason: errno == ENOENT ? "its folder does not exist" : String(cString: strerror(errno)))
        }
        var offset = 0
        var failure: Int32 = 0
        // Readable by node_exporter, which runs as another user, whatever the umask (the system
        // units run with 0077): fchmod is not masked as open's mode is.
        if fchmod(descriptor, 0o644) != 0 { failure = errno }
        if failure == 0 { bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { failure = written < 0 ? errno : ENOSPC; return }
                offset += written
            }
        } }
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(temporary, target) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporary)
            throw .cannotWrite(path: path, reason: String(cString: strerror(failure)) + "; nothing was written")
        }
    }
}
