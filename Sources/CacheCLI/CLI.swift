import FoundationEssentials
import Glibc
import OfflineCache

/// The `cache` command line: parse, run, and map any error to a message and an exit code.
/// Only this layer prints; only `main` exits.
public enum CLI {
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        let console = Console.standard(environment: environment)
        defer { console.flush() }
        return run(arguments: arguments, environment: environment, console: console)
    }

    /// - Parameters: `fetcher` and `refreshLauncher`, the network and the refresh a read starts:
    ///   the real ones, or a test's (see `Context`).
    static func run(arguments: [String], environment: [String: String], console: Console,
                    fetcher: any Fetching = Fetcher(), refreshLauncher: RefreshLauncher = .process) -> Int32 {
        let status = execute(arguments: arguments, environment: environment, console: console,
                             fetcher: fetcher, refreshLauncher: refreshLauncher)
        // Output that was lost is a failure, whatever the command thought: a million rows
        // exported into a full disk is not a success.
        console.flush()
        guard let lost = console.lostOutput else { return status }
        console.err("cache: " + lost.message)
        return ExitCode.ioError
    }

    private static func execute(arguments: [String], environment: [String: String], console: Console,
                                fetcher: any Fetching, refreshLauncher: RefreshLauncher) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try CommandParser.parse(arguments)
        } catch {
            report(error, console: console)
            return ExitCode.usage
        }
        console.dataFormat = dataFormat(of: invocation.command)
        if let color = invocation.color {
            console.useColor = Console.colors(color, terminal: console.stdoutIsTerminal, environment: environment)
        }
        let context = Context(
            databasePaths: invocation.databasePaths.isEmpty ? [CacheDatabase.defaultPath(environment: environment)] : invocation.databasePaths,
            environment: environment, console: console,
            readOnly: invocation.readOnly || Context.readOnly(in: environment),
            fetcher: fetcher, refreshLauncher: refreshLauncher)
        do {
            switch invocation.command {
            case .help(let topic):
                console.out((CommandTable.byName[topic] ?? CommandTable.spec("")).render())
                return ExitCode.success
            case .version:
                console.out(CacheVersion.report)
                return ExitCode.success
            case .completion(let shell):
                console.out(Completions.script(for: shell) ?? "")
                return ExitCode.success
            case .manpage:
                console.out(ManPage.render())
                return ExitCode.success
            case .sourcesAdd(let add): return try SourcesCommand.add(add, context)
            case .sourcesSet(let name, let settings): return try SourcesCommand.set(name, settings, context)
            case .sourcesList(let json): return try SourcesCommand.list(json: json, context)
            case .sourcesRemove(let name, let yes): return try SourcesCommand.remove(name, yes: yes, context)
            case .sourcesExport(let names): return try ApplyCommand.export(names, context)
            case .apply(let apply): return try ApplyCommand.run(apply, context)
            case .serve(let serve): return try ServeCommand.run(serve, context)
            case .sync(let sync): return try SyncCommand.run(sync, context)
            case .list(let list): return try ListCommand.run(list, context)
            case .status(let status): return try StatusCommand.run(status, context)
            case .metrics(let textfile): return try MetricsCommand.run(textfile: textfile, context)
            case .history(let source, let limit, let json): return try InspectCommands.history(source, limit: limit, json: json, context)
            case .diff(let source, let selection, let json): return try InspectCommands.diff(source, selection, json: json, context)
            case .prune(let seconds): return try InspectCommands.prune(keepSeconds: seconds, context)
            case .sql(let query, let format): return try InspectCommands.sql(query, format: format, context)
            case .check: return try InspectCommands.check(context)
            case .backup(let path): return try InspectCommands.backup(to: path, context)
            case .export(let source, let format): return try InspectCommands.export(source, format: format, context)
            case .log(let source, let key, let json): return try LogCommand.run(source, key: key, json: json, context)
            case .search(let search): return try SearchCommand.run(search, context)
            case .importAirbyte(let options): return try ImportCommand.run(options, context)
            case .reindex(let names): return try SearchCommand.reindex(names, context)
            case .edit(let edit): return try OutboxCommands.edit(edit, context)
            case .push(let push): return try OutboxCommands.push(push, context)
            case .outbox(let action): return try OutboxCommands.run(action, context)
            }
        } catch let error as UsageError {
            report(error, console: console)
            return ExitCode.usage
        } catch {
            var checking = false
            if case .check = invocation.command { checking = true }
            console.err("cache: \(TerminalSafe.escapeControl(String(describing: error)))" + suggestion(for: error, context, checking: checking))
            return ExitCode.of(error)
        }
    }

    /// "Did you mean 'bank'?" for a source name one or two keystrokes off, as for commands; for
    /// a damaged page, what a replica can do about it.
    static func suggestion(for error: Error, _ context: Context, checking: Bool = false) -> String {
        if let malformed = malformedPageHint(error, context, checking: checking) { return malformed }
        guard case CacheError.noSuchSource(let name) = error,
              let names = try? context.openEveryFileIfPresent().flatMap({ $0.sources.map(\.name) }),
              let best = names.min(by: { editDistance($0, name) < editDistance($1, name) }),
              editDistance(best, name) <= max(2, name.count / 3)
        else { return "" }
        return ". Did you mean '\(best)'?"
    }

    /// "database disk image is malformed" is also what a reader of a Litestream replica meets
    /// when the file was written to behind the follower, or while a restore was still writing it.
    static func malformedPageHint(_ error: Error, _ context: Context, checking: Bool) -> String? {
        let database: DatabaseError? = switch error {
        case let error as DatabaseError: error
        case CacheError.database(let error): error
        default: nil
        }
        guard let database, database.isMalformed else { return nil }
        // Of several files, the one whose read failed, as it was given: the failing connection's
        // own file, unless that is the first of several read through one connection (`sql`
        // attaches the others, and SQLite's error names none of them), when each is checked.
        let failed = database.file.flatMap(FileIdentity.of)
        var path = context.databasePaths.first { failed != nil && FileIdentity.of($0) == failed } ?? context.databasePath
        if context.databasePaths.count > 1, path == context.databasePath, let damaged = firstDamaged(context.databasePaths) {
            path = damaged
        }
        return ". If \(path) is a Litestream replica, a restore still writing it or a write made to it behind the follower shows this: "
            + "stop the follower and restore it again ('litestream restore -o \(path) REPLICA', after moving the damaged file aside)"
            + (checking ? "" : "; otherwise 'cache check' says what is damaged")
    }

    /// The first of `paths` whose pages SQLite's quick check finds damaged (on the error path
    /// alone: it reads each file whole).
    private static func firstDamaged(_ paths: [String]) -> String? {
        paths.first { path in
            guard let database = try? CacheDatabase(path: path, access: .readOnly) else { return false }
            return (try? database.connection.scalarText("PRAGMA quick_check(1)")) != "ok"
        }
    }

    /// The data format a command writes to stdout, whose upstream text is escaped when stdout is
    /// a terminal; nil for human output, which escapes each field it prints (and colours lines).
    static func dataFormat(of command: Command) -> TerminalSafe.Format? {
        switch command {
        case .sourcesExport: return .json
        case .apply(let apply): return apply.json ? .json : nil
        case .sourcesList(json: true), .history(_, _, json: true), .diff(_, _, json: true), .log(_, _, json: true):
            return .json
        case .status(let status): return status.json ? .json : nil
        case .sync(let sync): return sync.json ? .json : nil
        case .list(let list): return list.format == .json ? .json : list.format == .csv ? .text : nil
        case .sql(_, let format): return format == .json ? .json : .text
        case .export(_, let format): return format == .csv ? .text : .json
        case .search(let search): return search.json ? .json : nil
        case .importAirbyte: return .json
        case .push(let push): return push.json ? .json : nil
        case .outbox(.list(_, _, json: true)), .outbox(.show(_, json: true)): return .json
        default: return nil
        }
    }

    /// Prints a usage error: the one form of every error (`cache: ` and the sentence), then the
    /// usage line and where the help is.
    static func report(_ error: UsageError, console: Console) {
        // Lower-case like every other error: one sentence after `cache: `.
        console.err("cache: " + error.message.prefix(1).lowercased() + error.message.dropFirst())
        let help = CommandTable.byName[error.command ?? ""] ?? CommandTable.spec("")
        console.err("Usage: \(help.usage)")
        let topic = error.command.map { "cache \($0) --help" } ?? "cache --help"
        console.err("See '\(topic)' for more information.")
    }
}
