import FoundationEssentials

/// A consistent copy of a cache file, made while syncs, pushes and `cache serve` go on
/// (`cache backup`). SQLite's `VACUUM INTO` reads one snapshot — a read transaction, so writers
/// are not held up, and a write in progress is not in it — and writes a compact copy beside the
/// path asked for. The copy is checked (`Integrity.check`), made readable by this user alone, and
/// on disk before it takes that path: a file there is always a whole, sound cache, and a file
/// already there is never replaced.
package enum Backup {
    package struct Report: Sendable {
        package let path: String
        package let bytes: Int
        package let sources: Int
        package let schemaVersion: Int
    }

    package static func write(_ database: CacheDatabase, to destination: String) throws(CacheError) -> Report {
        guard FileSystem.linkStatus(destination) == nil else {
            throw .cannotCreate(path: destination, reason: "a file is already there; back up to a new path, or move that one away first")
        }
        // Written beside it (one file system, so the link into place is atomic), hidden, named for
        // this process.
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { $0 == destination.startIndex ? "/" : String(destination[..<$0]) } ?? "."
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        let partial = (slash == nil ? "" : folder + (folder == "/" ? "" : "/")) + "." + name + ".partial-\(Processes.current)"
        FileSystem.remove(partial)
        var kept = false
        defer { if !kept { FileSystem.remove(partial) } }
        do {
            try database.connection.run("VACUUM INTO ?", [.text(partial)])
        } catch {
            // The cache itself damaged is 74; a folder missing or not writable, 73.
            if error.isCorruptionOrIO, FileSystem.refusal(writing: folder) == nil { throw .database(error) }
            throw .cannotCreate(path: destination, reason: "\(error.message) (is the folder \(folder) there, and writable?)")
        }
        let report: IntegrityReport
        do {
            report = try Integrity.check(path: partial, readOnly: true)
        } catch {
            throw .cannotWrite(path: destination, reason: "the copy could not be read back: \(error)")
        }
        // The file's own soundness; a search index recorded as damaged is copied as it is, and
        // 'cache reindex' mends it in the copy as in the cache.
        guard report.problems.isEmpty, report.foreignKeyProblems.isEmpty, report.schemaVersion <= report.knownVersion else {
            throw .cannotWrite(path: destination, reason: "the copy failed its check: \(report.problems.first ?? report.foreignKeyProblems.first ?? "a newer schema")")
        }
        let sources = (try? CacheDatabase.openForInspection(partial, readOnly: true).scalarInt("SELECT count(*) FROM sources")).map { Int($0) } ?? 0
        // Only this user reads it, as the cache itself (whatever the umask made of SQLite's 0644).
        do {
            try FileSystem.setPermissions(partial, 0o600)
        } catch {
            throw .cannotWrite(path: destination, reason: error.description)
        }
        try sync(partial, destination)
        // A link, not a rename: it fails where a file appeared at the path meanwhile (another
        // backup to the same path), which a rename would replace.
        do {
            try FileSystem.makeLink(to: partial, at: destination)
        } catch {
            throw .cannotCreate(path: destination, reason: error.isAlreadyThere ? "a file is already there; back up to a new path, or move that one away first"
                                                                                : error.description)
        }
        FileSystem.remove(partial)
        kept = true
        try sync(folder, destination)
        let bytes = FileSystem.status(destination)?.size ?? 0
        return Report(path: destination, bytes: bytes, sources: sources, schemaVersion: report.schemaVersion)
    }

    /// `fsync`s a file or a folder, so the copy and its name survive a crash once reported.
    private static func sync(_ path: String, _ destination: String) throws(CacheError) {
        do {
            try FileSystem.syncToDisk(path)
        } catch {
            throw .cannotWrite(path: destination, reason: error.description)
        }
    }
}
