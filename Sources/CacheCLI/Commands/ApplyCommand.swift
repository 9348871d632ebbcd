import FoundationEssentials
import Glibc
import OfflineCache

/// `cache sources export` and `cache apply`: a cache's sources as a file under version control,
/// and a cache made to match one (see `SourcesFile`).
enum ApplyCommand {
    static func export(_ names: [String], _ context: Context) throws -> Int32 {
        let database = try context.openForReadingIfPresent()
        let all = try database.map { try SourceStore($0).all() } ?? []
        for name in names where !all.contains(where: { $0.name == name }) { throw CacheError.noSuchSource(name) }
        context.console.out(SourcesFile.export(names.isEmpty ? all : all.filter { names.contains($0.name) }))
        return ExitCode.success
    }

    static func run(_ apply: Command.Apply, _ context: Context) throws -> Int32 {
        let data = try read(apply.file)
        // The whole file is checked before the cache is opened: a refused file changes nothing.
        let wanted = try SourcesFile.sources(in: data, named: apply.file == "-" ? "standard input" : apply.file)
        let console = context.console
        for variable in unsetVariables(wanted, context.environment) {
            console.err("cache: warning: $\(variable) is not set here; a sync from this environment would stop until it is.")
        }
        // A plan reads; an apply that creates the first source creates the cache.
        let database = apply.plan ? try context.openForReadingIfPresent() : try context.open(create: true)
        let store = database.map(SourceStore.init)
        var steps = try SourcesFile.plan(wanted, existing: try store?.all() ?? [], prune: apply.prune) { name in
            try store!.belongings(of: name)
        }
        if !apply.plan, let store {
            guard try removalConfirmed(steps, yes: apply.yes, console) else {
                console.err("Nothing changed.")
                return ExitCode.success
            }
            steps = try store.apply(steps)
        }
        if apply.json {
            console.out(JSONValue.lines(steps.map { step in
                .object([("source", .string(step.source)), ("action", .string(step.action.rawValue)),
                         ("changes", .object(step.changes.map { ($0.option, .array([.string($0.before), .string($0.after)])) }))]
                        + (step.gone.map { [("rows", .int($0.rows)), ("runs", .int($0.runs))] } ?? []))
            }))
        } else {
            console.out(steps.map { describe($0, planned: apply.plan) + "\n" }.joined())
        }
        let done: [SourcesFile.Step.Action: String] = [.create: "added", .change: "changed", .unchanged: "unchanged", .keep: "kept", .remove: "removed"]
        let planned: [SourcesFile.Step.Action: String] = [.create: "to add", .change: "to change", .unchanged: "unchanged", .keep: "kept", .remove: "to remove"]
        let counts = SourcesFile.Step.Action.allCases.compactMap { action -> String? in
            let count = steps.filter { $0.action == action }.count
            return count == 0 ? nil : "\(count) \((apply.plan ? planned : done)[action]!)"
        }
        let summary = counts.isEmpty ? "no sources" : counts.joined(separator: ", ")
        console.err(apply.plan ? "Plan: \(summary); nothing changed (run without --plan to apply)." : "Applied: \(summary).")
        return ExitCode.success
    }

    /// The most a sources file may hold: a list of sources is kilobytes; a single 100 MB value
    /// is a mistake, refused before it is stored.
    static let largestFile = 16 << 20

    /// The file's bytes, or standard input's for `-`. Whatever can be read is read: a regular
    /// file, a FIFO, a process substitution (`<(cache sources export)`, a `/dev/fd/N`); a folder
    /// or a device is refused by what it is (64), a missing or unreadable file is 66.
    static func read(_ path: String, as noun: String = "sources file", limit: Int = largestFile) throws -> Data {
        let descriptor: Int32
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            var info = stat()
            guard stat(path, &info) == 0 else {
                throw SourcesFile.Refusal.unreadable("cannot read \(path): " + String(cString: strerror(errno)))
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: throw SourcesFile.Refusal.invalid("\(path) is a folder, not a \(noun).")
            case S_IFCHR, S_IFBLK: throw SourcesFile.Refusal.invalid("\(path) is a device, not a \(noun).")
            default: break
            }
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw SourcesFile.Refusal.unreadable("cannot read \(path): " + String(cString: strerror(errno)))
            }
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw SourcesFile.Refusal.unreadable("cannot read \(path == "-" ? "standard input" : path): " + String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= limit else {
                throw SourcesFile.Refusal.invalid("\(path == "-" ? "standard input" : path) is larger than \(limit >> 20) MiB: "
                    + (noun == "sources file" ? "a sources file lists sources, and holds no data." : "too large for a \(noun).") )
            }
        }
        return Data(bytes)
    }

    /// Whether the removals a `--prune` makes may go ahead: with `--yes`; else, on a terminal,
    /// when the person says so after reading what goes; elsewhere never (a usage error that says
    /// what would go). Removing rows and history cannot be undone, and a file that lost its list
    /// (`{"sources": []}`) must not empty the cache with exit 0.
    private static func removalConfirmed(_ steps: [SourcesFile.Step], yes: Bool, _ console: Console) throws -> Bool {
        let removals = steps.filter { $0.action == .remove }
        guard !removals.isEmpty, !yes else { return true }
        let what = removals.map { step in
            "'\(step.source)'" + (step.gone.map { " (\($0.rows) cached row\($0.rows == 1 ? "" : "s") and \($0.runs) sync run\($0.runs == 1 ? "" : "s"))" } ?? "")
        }.joined(separator: ", ")
        let count = removals.count == 1 ? "1 source" : "\(removals.count) sources"
        guard isatty(STDIN_FILENO) == 1 && console.stderrIsTerminal else {
            throw UsageError(message: "--prune would remove \(count) the file does not have: \(what). Nothing changed; add --yes to remove \(removals.count == 1 ? "it" : "them") without a prompt, or --plan to see every change.",
                             command: "apply")
        }
        console.errRaw(TerminalSafe.escapeControl("Remove \(count) the file does not have: \(what)? [y/N] "))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingSpaces().lowercased())
    }

    /// One line per source: what happens to it, and why.
    private static func describe(_ step: SourcesFile.Step, planned: Bool) -> String {
        let changes = step.changes.map { "\($0.option) \($0.before) → \($0.after)" }.joined(separator: ", ")
        let what: String = switch step.action {
        case .create: planned ? "would be added" : "added"
        case .change: (planned ? "would change: " : "changed: ") + changes
        case .unchanged: "unchanged"
        case .keep: "kept: not in the file (--prune removes it)"
        case .remove: (planned ? "would be removed with " : "removed with ")
            + (step.gone.map { "\($0.rows) cached row\($0.rows == 1 ? "" : "s") and \($0.runs) sync run\($0.runs == 1 ? "" : "s")" } ?? "its rows")
        }
        return TerminalSafe.escapeControl("\(step.source): \(what)")
    }

    /// The variables the sources name (tokens, OAuth2 clients, `${VAR}` in URLs and headers)
    /// that this environment lacks.
    private static func unsetVariables(_ sources: [Source], _ environment: [String: String]) -> [String] {
        var seen: Set<String> = []
        return sources.flatMap { $0.variables }.filter { (environment[$0] ?? "").isEmpty && seen.insert($0).inserted }
    }
}
