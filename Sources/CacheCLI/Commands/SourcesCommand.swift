import FoundationEssentials
import Glibc
import OfflineCache

enum SourcesCommand {
    static func add(_ source: Source, _ context: Context) throws -> Int32 {
        let database = try context.open(create: true)
        try SourceStore(database).add(source)
        context.console.err("Added \(source.kind.rawValue) source '\(source.name)' (\(source.mode.rawValue), ttl \(DurationText.format(source.ttlSeconds))). Run 'cache sync \(source.name)' to fetch it.")
        return ExitCode.success
    }

    /// Changes a source in place and says what changed, setting by setting.
    static func set(_ name: String, _ given: SourceSettings, _ context: Context) throws -> Int32 {
        if case .text(let text)? = given[.url], let url = URL(string: text), url.scheme?.lowercased() == "file",
           !FileManager.default.fileExists(atPath: url.path) {
            context.console.err("cache: note: \(url.path) does not exist yet; the next sync will fail until it does.")
        }
        let store = try SourceStore(context.open(create: false))
        // Refused as a usage error before the change; checked again inside its transaction.
        let current = try store.named(name)
        do throws(SourceRules.Problem) {
            _ = try given.changing(current)
        } catch {
            throw UsageError(message: error.message, command: "sources set")
        }
        let (before, after) = try store.update(name, by: given)
        let shown = after.kind.options.compactMap(\.shown)
        var changes = shown.compactMap { label, value in
            value(before) == value(after) ? nil : TerminalSafe.escapeControl("\(label) \(value(before)) → \(value(after))")
        }
        // Headers are shown by name: the same names with other values are a change too.
        if before.headers != after.headers, before.headers.map(\.name) == after.headers.map(\.name),
           let headers = SourceOption.header.shown {
            changes.append("\(headers.label) \(headers.value(after)) (new values)")
        }
        let console = context.console
        if changes.isEmpty {
            console.err("Source '\(name)' already had these settings; nothing changed.")
            return ExitCode.success
        }
        console.err("Changed source '\(name)': " + changes.joined(separator: ", ") + ".")
        let changed = { (effect: SourceOption.Effects) in
            after.kind.options.contains { $0.effects.contains(effect) && $0.text(before) != $0.text(after) }
        }
        if changed(.unconfirms) && !changed(.rekeys) {
            console.err("Its cached rows are kept but count as stale until 'cache sync \(name)' confirms them.")
        } else if changed(.rekeys) {
            console.err("Its cached records are keyed anew from their own fields, and count as stale until 'cache sync \(name)' confirms them.")
        }
        return ExitCode.success
    }

    /// A listed setting with what a terminal would obey shown as text (an unsent header's name).
    private static func escaped(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .string(TerminalSafe.escapeControl(text))
        case .array(let items): .array(items.map(escaped))
        default: value
        }
    }

    static func list(json: Bool, _ context: Context) throws -> Int32 {
        // No database yet: no sources, the same as an empty one (nothing is created).
        // Of several files, each source from the file that holds it.
        let files = try context.openEveryFileIfPresent()
        let sources = files.flatMap(\.sources)
        let console = context.console
        if json {
            let items: [JSONValue] = files.flatMap { file in file.sources.map { listed($0, file.database, file: context.isSharded ? file.path : nil) } }
            console.out(JSONValue.lines(items))
            return ExitCode.success
        }
        if sources.isEmpty {
            console.err("No sources yet. Add one with 'cache sources add NAME --kind \(SourceKind.allCases.map(\.rawValue).joined(separator: "|")) --url URL'.")
            return ExitCode.success
        }
        let table = TextTable(header: ["NAME", "KIND", "MODE", "TTL", "URL"] + (context.isSharded ? ["DB"] : []))
        for file in files {
            for source in file.sources {
                table.add([source.name, source.kind.rawValue, source.mode.rawValue,
                           DurationText.format(source.ttlSeconds), source.displayURL] + (context.isSharded ? [file.path] : []))
            }
        }
        console.out(table.render(columns: console.terminalColumns))
        for source in sources where !source.unsentHeaders.isEmpty {
            let names = source.unsentHeaders.map { "'\(TerminalSafe.escapeControl($0))'" }.joined(separator: ", ")
            console.err("cache: \(source.name): stored header\(source.unsentHeaders.count == 1 ? "" : "s") \(names) "
                + "\(source.unsentHeaders.count == 1 ? "is" : "are") not valid (a control character?) and not sent; "
                + "set the headers again with 'cache sources set \(source.name) --header \"Name: value\"'")
        }
        return ExitCode.success
    }

    /// One source as `sources list --json` shows it: its settings, for a json source its view
    /// and progress, whether its search index is built, and (of several files) its file.
    private static func listed(_ source: Source, _ database: CacheDatabase, file: String?) -> JSONValue {
        var fields: [(String, JSONValue)] = [("name", .string(source.name)), ("kind", .string(source.kind.rawValue))]
        fields += source.kind.options.flatMap { $0.listed(source) }.map { ($0, escaped($1)) }
        if source.layout != nil {
            // An incremental source's watermark and last full sync, beside its settings.
            if source.kind.options.contains(.sinceParam) {
                let progress = try? SourceStore(database).watermark(of: source.name)
                fields.append(("watermark", .optional(progress?.watermark)))
                fields.append(("last_full_at", .optional(progress?.lastFullAt)))
            }
            let view: String? = try? RecordView.name(database.connection, source: source.name)
            let children = (try? RecordView.childViews(database.connection, source: source.name)) ?? []
            fields += [("view", .optional(view)), ("child_views", .array(children.map { .string($0) }))]
        }
        // The search index is built on the source's first search, and kept in step from then on.
        let built = source.searchable && (try? SearchIndex(database).isBuilt(source.name)) == true
        fields.append(("search_index", .string(!source.searchable ? "off" : built ? "built" : "on first search")))
        if let file { fields.append(("database", .string(file))) }
        return .object(fields)
    }

    /// Removes a source and all it holds, which cannot be undone: on a terminal it asks first,
    /// saying what goes; elsewhere it needs `--yes`.
    static func remove(_ name: String, yes: Bool, _ context: Context) throws -> Int32 {
        let store = try SourceStore(context.open(create: false))
        let console = context.console
        if !yes {
            let what = describe(try store.belongings(of: name))
            guard isatty(STDIN_FILENO) == 1 && console.stderrIsTerminal else {
                throw UsageError(message: "Removing '\(name)' deletes \(what); add --yes to remove it without a prompt.",
                                 command: "sources remove")
            }
            console.errRaw("Remove source '\(name)' with \(what)? [y/N] ")
            guard let answer = readLine(), ["y", "yes"].contains(answer.trimmingSpaces().lowercased()) else {
                console.err("Kept '\(name)'.")
                return ExitCode.success
            }
        }
        let gone = try store.remove(name)
        console.err("Removed source '\(name)' with \(describe(gone)).")
        return ExitCode.success
    }

    private static func describe(_ belongings: SourceStore.Belongings) -> String {
        "\(belongings.rows) cached row\(belongings.rows == 1 ? "" : "s") and \(belongings.runs) sync run\(belongings.runs == 1 ? "" : "s")"
    }
}
