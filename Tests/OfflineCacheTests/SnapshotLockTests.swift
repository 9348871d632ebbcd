import CSQLite
import Foundation
import Testing
@testable import OfflineCache

/// The shared lock a snapshot read holds (an immutable connection to a WAL file with neither
/// side file), seen from another process that locks the file as Litestream's follower does, and
/// this process's own looks at the file, which must never drop a lock SQLite holds in it.
@Suite(.computing) struct SnapshotLockTests {
    /// Whether another process can take the file's lock as a writer that follows SQLite's
    /// protocol does (the shared range, exclusively), without waiting: "free" or "busy".
    static func writerCanLock(_ path: String) throws -> String {
        let script = """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)
                print("free")
            except OSError:
                print("busy")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func file(journal: String) throws -> (folder: String, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-lock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/db.sqlite3"
        do {
            let writer = try Connection(path: path)
            _ = try writer.scalarText("PRAGMA journal_mode=\(journal)")
            try writer.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2)")
        }
        return (folder, path)
    }

    @Test func aSnapshotHoldsWritersOffUntilItClosesAndAnotherSnapshotsCloseLeavesItsLock() throws {
        let (folder, path) = try Self.file(journal: "WAL")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(try Self.writerCanLock(path) == "free")
        var first: Connection? = try Connection.readingWithoutCreating(path)
        #expect(first?.readsASnapshot == true)
        #expect(try Self.writerCanLock(path) == "busy")
        // A second snapshot of the same file, opened and closed: SQLite closing its descriptor
        // drops this process's POSIX locks on the file, but not the first snapshot's.
        do {
            let second = try Connection.readingWithoutCreating(path)
            #expect(try second.scalarInt("SELECT count(*) FROM t") == 2)
        }
        #expect(try Self.writerCanLock(path) == "busy")
        #expect(try first?.scalarInt("SELECT count(*) FROM t") == 2)
        first = nil
        #expect(try Self.writerCanLock(path) == "free")
        _ = first
    }

    @Test func lookingAtAFilesHeaderLeavesAReadersLockInPlace() throws {
        let (folder, path) = try Self.file(journal: "DELETE")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A reader in rollback mode, inside a read: SQLite holds its SHARED lock.
        let reader = try Connection(path: path, readOnly: true)
        try reader.execute("BEGIN")
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 2)
        #expect(try Self.writerCanLock(path) == "busy")
        // Another connection opened the way read-only mode opens one: it reads the file's header
        // first, and that must not let go of the reader's lock.
        let other = try Connection.readingWithoutCreating(path)
        #expect(!other.readsASnapshot)
        #expect(try Self.writerCanLock(path) == "busy")
        try reader.execute("COMMIT")
        #expect(try Self.writerCanLock(path) == "free")
    }
}

extension SnapshotLockTests {
    /// A follower applying an update to a rollback-mode file holds its pending byte while it
    /// waits for the readers and writes: a reader that meets the lock is told which process it is.
    @Test func theProcessHoldingARollbackFilesPendingByteIsNamed() throws {
        let (folder, path) = try Self.file(journal: "DELETE")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            fcntl.lockf(fd, fcntl.LOCK_EX, 1, 0x40000000)
            print("held", flush=True)
            sys.stdin.read()
            """, path]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        defer { try? input.fileHandleForWriting.close(); holder.waitUntilExit() }
        var said = ""
        while !said.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        #expect(said == "held\n")
        #expect(LockHolder.writer(of: path) == holder.processIdentifier)
        let reader = try Connection(path: path, readOnly: true, busyTimeoutMs: 50)
        #expect { try reader.scalarInt("SELECT count(*) FROM t") } throws: { error in
            "\(error)".contains("pid \(holder.processIdentifier) (python3 ") && "\(error)".contains("holds its write lock")
        }
    }
}
