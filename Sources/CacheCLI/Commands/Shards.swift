import FoundationEssentials
import Glibc
import OfflineCache

/// Several `--db` files read as one cache: sources sharded over primaries, each primary
/// syncing and replicating its own file (its own leases, heartbeat and Litestream), and a
/// follower reading them together. Each source is held by one file: a name in two is refused,
/// naming both, since which one to read would be a guess.
struct Shards {
    /// One file and what it holds.
    struct File {
        let path: String
        let database: CacheDatabase
        let sources: [Source]
        /// How far behind its own primary this file is.
        let lag: ReplicaLag
    }

    let files: [File]

    /// Opens every file read-only, creating and migrating nothing. One file named twice (under
    /// two spellings: `a.db`, `./a.db`) is a mistake in the command.
    init(paths: [String]) throws {
        var files: [File] = []
        var holder: [String: String] = [:]
        var seen: [FileIdentity: String] = [:]
        for path in paths {
            if let identity = FileIdentity.of(path) {
                if let other = seen[identity] { throw UsageError(message: "'--db \(other)' and '--db \(path)' are the same file.", command: nil) }
                seen[identity] = path
            }
            let database = try CacheDatabase(path: path, access: .readOnly)
            let sources = try SourceStore(database).all()
            for source in sources {
                if let other = holder[source.name] { throw CacheError.inTwoFiles(source.name, other, path) }
                holder[source.name] = path
            }
            files.append(File(path: path, database: database, sources: sources, lag: ReplicaLag.of(database, readOnly: true)))
        }
        self.files = files
    }

    /// The file holding `name`.
    func holding(_ name: String) throws(CacheError) -> File {
        guard let file = files.first(where: { $0.sources.contains { $0.name == name } }) else { throw .noSuchSource(name) }
        return file
    }
}
