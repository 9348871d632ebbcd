import FoundationEssentials
import OfflineCache

/// `cache edit`, `cache push` and `cache outbox`: local edits, from the queue to the upstream.
enum OutboxCommands {
    typealias Change = LocalEdit.Change

    static func edit(_ edit: Command.Edit, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let source = try SourceStore(database).named(edit.name)
        let change: Change
        if let patch = edit.patch { change = .patch(patch) }
        else if let record = edit.replace { change = .replace(record) }
        else if let record = edit.create { change = .create(record) }
        else if edit.delete { change = .delete }
        else { change = .patch(setPatch(edit.set)) }
        let queued = try OutboxStore(database).queue(change, source: source, key: edit.key)
        let console = context.console
        console.out("queued: \(queued.operation.rawValue) \(source.name) \(TerminalSafe.escapeControl(queued.key)) (edit \(queued.id))\n")
        guard let wait = edit.wait else { return ExitCode.success }
        var pusher = pusher(context)
        pusher.timeout = Double(max(wait, 1))
        let report = try pusher.push([source])
        let now = try OutboxStore(database).edit(queued.id)
        switch now.state {
        case .applied:
            console.out("applied: \(now.operation.rawValue) \(source.name) \(TerminalSafe.escapeControl(now.key))\n")
            return ExitCode.success
        case .conflict, .rejected, .blocked:
            console.err("cache: edit \(now.id) is \(now.state.rawValue): \(TerminalSafe.escapeControl(now.answer ?? "")); 'cache outbox show \(now.id.prefix(8))' shows it")
            return 1
        default:
            let why = report.stopped[source.name] ?? now.answer ?? "no answer yet"
            console.err("cache: edit \(now.id) is still queued (\(TerminalSafe.escapeControl(why))); 'cache push' or the next 'cache sync' sends it again")
            return report.stoppedBy[source.name].map { ExitCode.of($0, hadCachedRows: true) } ?? ExitCode.temporaryFailure
        }
    }

    /// `--set FIELD=VALUE…` as one merge patch: each value as JSON when it parses, else as text.
    static func setPatch(_ pairs: [String]) -> String {
        let members = pairs.map { pair -> (String, JSONValue) in
            let equals = pair.firstIndex(of: "=")!
            let text = String(pair[pair.index(after: equals)...])
            let value = (try? JSONValue.parse(Data(text.utf8))) ?? .string(text)
            return (String(pair[..<equals]), value)
        }
        return JSONValue.object(members).compact
    }

    static func pusher(_ context: Context) -> Pusher {
        let path = context.databasePath
        return Pusher(open: { try CacheDatabase(path: path, access: .write) }, fetcher: context.fetcher, environment: context.environment)
    }

    /// The sources named (each once), or every source.
    static func sources(_ names: [String], _ database: CacheDatabase) throws -> [Source] {
        let store = SourceStore(database)
        var seen = Set<String>()
        return try names.isEmpty ? store.all() : names.filter { seen.insert($0).inserted }.map { name throws(CacheError) in try store.named(name) }
    }

    static func push(_ push: Command.Push, _ context: Context) throws -> Int32 {
        let database = try context.open(create: false)
        let sources = try sources(push.names, database)
        let console = context.console
        if push.plan {
            let due = try OutboxStore(database).edits(of: sources.map(\.name)).filter { $0.state == .queued || $0.state == .inFlight }
            for edit in due { console.out("would send: \(edit.operation.rawValue) \(edit.source) \(TerminalSafe.escapeControl(edit.key)) (edit \(edit.id))\n") }
            if due.isEmpty { console.out("nothing to push\n") }
            return ExitCode.success
        }
        let report = try pusher(context).push(sources)
        return finish(report, json: push.json, quiet: false, context)
    }

    /// Prints what a push did and gives its exit status: when a source's push stopped, what
    /// stopped it says (77 for credentials refused, 78 for a missing token, 65 for a read the
    /// upstream refused, as a sync would); 1 for a conflict or a rejection, 75 when edits stay
    /// queued after a failure.
    static func finish(_ report: LocalEdit.PushReport, json: Bool, quiet: Bool, _ context: Context) -> Int32 {
        let console = context.console
        if json {
            console.out(JSONValue.object([
                ("applied", .int(report.applied)), ("conflicts", .int(report.conflicts)), ("rejected", .int(report.rejected)),
                ("queued", .int(report.queued)),
                ("stopped", .object(report.stopped.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                ("edits", .array(report.lines.map { .string($0) })),
            ]).compact + "\n")
        } else if !quiet {
            for line in report.lines { console.out(TerminalSafe.escapeControl(line) + "\n") }
        }
        for (source, why) in report.stopped.sorted(by: { $0.key < $1.key }) {
            console.err("cache: push \(source): \(TerminalSafe.escapeControl(why))")
        }
        if let first = report.stopped.keys.sorted().first {
            return report.stoppedBy[first].map { ExitCode.of($0, hadCachedRows: true) } ?? ExitCode.noPermission
        }
        if report.conflicts + report.rejected > 0 {
            if !json { console.err("cache: \(report.conflicts) conflict\(report.conflicts == 1 ? "" : "s") and \(report.rejected) rejected: 'cache outbox' lists them") }
            return 1
        }
        return report.queued > 0 ? ExitCode.temporaryFailure : ExitCode.success
    }

    static func run(_ action: Command.Outbox, _ context: Context) throws -> Int32 {
        let console = context.console
        switch action {
        case .list(let names, let all, let json):
            let database = try context.openForReading()
            if !names.isEmpty { _ = try sources(names, database) }
            let edits = try OutboxStore(database).edits(of: names, all: all)
            if json {
                console.out(JSONValue.lines(edits.map(Self.json)))
                return ExitCode.success
            }
            guard !edits.isEmpty else {
                console.out("The outbox is empty: every local edit was applied.\n")
                return ExitCode.success
            }
            let table = TextTable(header: ["SOURCE", "KEY", "ID", "OP", "STATE", "TRIES", "MADE", "LAST ANSWER"], droppable: ["MADE", "TRIES"])
            for edit in edits {
                table.add([edit.source, TerminalSafe.escapeControl(edit.key), String(edit.id.prefix(8)), edit.operation.rawValue, edit.state.rawValue,
                           String(edit.attempts), InspectCommands.when(edit.madeAt),
                           TerminalSafe.escapeControl(answerLine(edit))])
            }
            console.out(table.render(columns: console.terminalColumns))
        case .show(let id, let json):
            let database = try context.openForReading()
            let store = OutboxStore(database)
            let edit = try store.edit(id)
            let life = try store.history(source: edit.source, key: edit.key).filter { $0.edit == edit.id }
            if json {
                var value = Self.json(edit)
                if case .object(var members) = value {
                    members += [("body", edit.body.map { .raw($0) } ?? .null), ("base", edit.base.map { .raw($0) } ?? .null),
                                ("remote", edit.remote.map { .raw($0) } ?? .null),
                                ("log", .array(life.map { .object([("at", .string($0.at)), ("event", .string($0.event)), ("detail", .optional($0.detail))]) }))]
                    value = .object(members)
                }
                console.out(value.rendered(indent: "  ") + "\n")
                return ExitCode.success
            }
            var lines = ["edit \(edit.id)", "  \(edit.operation.rawValue) \(edit.source) \(edit.key): \(edit.state.rawValue), \(edit.attempts) attempt\(edit.attempts == 1 ? "" : "s")"]
            if let body = edit.body { lines.append("  change: \(body)") }
            if let base = edit.base { lines.append("  made on: \(base)") }
            if edit.state == .conflict { lines.append("  upstream now: \(edit.remote ?? "(gone)")") }
            if edit.answerStatus != nil || edit.answer != nil { lines.append("  last answer: \(answerLine(edit))") }
            for event in life { lines.append("  \(event.at)  \(event.event)\(event.detail.map { ": " + $0 } ?? "")") }
            console.out(lines.map(TerminalSafe.escapeControl).joined(separator: "\n") + "\n")
        case .retry(let id), .drop(let id):
            let database = try context.open(create: false)
            let store = OutboxStore(database)
            let edit = try store.edit(id)
            let source = try SourceStore(database).named(edit.source)
            let now: LocalEdit
            if case .retry = action { now = try store.retry(edit.id, source: source) } else { now = try store.drop(edit.id, source: source) }
            console.out("\(now.state == .dropped ? "dropped" : "queued again"): \(now.operation.rawValue) \(now.source) \(TerminalSafe.escapeControl(now.key)) (edit \(now.id))\n")
        case .resolve(let name, let key, let takeLocal):
            let database = try context.open(create: false)
            let source = try SourceStore(database).named(name)
            let edit = try OutboxStore(database).resolve(source: source, key: key, takeLocal: takeLocal)
            console.out(takeLocal
                ? "queued again onto the upstream's version: \(edit.operation.rawValue) \(name) \(TerminalSafe.escapeControl(key)) (edit \(edit.id)); 'cache push' sends it\n"
                : "took the upstream's version of \(name) \(TerminalSafe.escapeControl(key)); edit \(edit.id) dropped\n")
        }
        return ExitCode.success
    }

    static func answerLine(_ edit: LocalEdit) -> String {
        let answer = (edit.answer ?? "").split(whereSeparator: \.isNewline).joined(separator: " ")
        return [edit.answerStatus.map { "HTTP \($0)" }, answer.isEmpty ? nil : String(answer.prefix(200))].compactMap { $0 }.joined(separator: " ")
    }

    static func json(_ edit: LocalEdit) -> JSONValue {
        .object([("source", .string(edit.source)), ("key", .string(edit.key)), ("id", .string(edit.id)), ("op", .string(edit.operation.rawValue)),
                 ("state", .string(edit.state.rawValue)), ("attempts", .int(edit.attempts)), ("made_at", .string(edit.madeAt)),
                 ("next_at", .optional(edit.nextAt)), ("answer_status", .optional(edit.answerStatus)), ("answer", .optional(edit.answer))])
    }
}
