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
    static func set(_ name: String, _ given: SourceSettings.Checked, _ context: Context) throws -> Int32 {
        if let url = given.url, url.scheme?.lowercased() == "file", !FileManager.default.fileExists(atPath: url.path) {
            context.console.err("cache: note: \(url.path) does not exist yet; the next sync will fail until it does.")
        }
        let store = try SourceStore(context.open(create: false))
        if let refusal = given.refusal(for: try store.named(name)) {
            throw UsageError(message: refusal.message, command: "sources set")
        }
        let (before, after) = try store.update(name) { given.apply(to: &$0) }
        let old = settings(of: before), new = settings(of: after)
        var changes = old.indices.compactMap { index in
            old[index].1 == new[index].1 ? nil : "\(old[index].0) \(old[index].1) → \(new[index].1)"
        }
        // Headers are shown by name: the same names with other values are a change too.
        if before.headers != after.headers, let names = new.first(where: { $0.0 == "headers" })?.1,
           old.first(where: { $0.0 == "headers" })?.1 == names {
            changes.append("headers \(names) (new values)")
        }
        let console = context.console
        if changes.isEmpty {
            console.err("Source '\(name)' already had these settings; nothing changed.")
            return ExitCode.success
        }
        console.err("Changed source '\(name)': " + changes.joined(separator: ", ") + ".")
        if before.url != after.url || before.layout?.rows != after.layout?.rows {
            console.err("Its cached rows are kept but count as stale until 'cache sync \(name)' confirms them.")
        } else if before.layout?.key != after.layout?.key {
            console.err("Its cached records are keyed anew from their own fields, and count as stale until 'cache sync \(name)' confirms them.")
        }
        return ExitCode.success
    }

    /// Each setting as people read it, in a fixed order, for saying what `set` changed.
    private static func settings(of source: Source) -> [(String, String)] {
        [("url", TerminalSafe.escapeControl(source.displayURL)), ("ttl", DurationText.format(source.ttlSeconds)),
         ("mode", source.mode.rawValue),
         ("headers", source.headers.isEmpty ? "none" : source.headers.map(\.name).joined(separator: ", ")),
         ("token", source.tokenEnv.map { "$\($0)" } ?? "none"),
         ("oauth-token-url", source.oauth.map { TerminalSafe.escapeControl(Source.redacted($0.tokenURL)) } ?? "none"),
         ("client-id-env", source.oauth.map { "$" + $0.clientIDEnv } ?? "none"),
         ("client-secret-env", source.oauth.map { "$" + $0.clientSecretEnv } ?? "none"),
         ("scope", source.oauth?.scope.map(TerminalSafe.escapeControl) ?? "none"),
         ("max-bytes", source.maxBytes.map(String.init) ?? "default"),
         ("ca-cert", source.caCert ?? "system"),
         ("max-delete", (source.maxDelete ?? .default).description),
         ("alert-after", source.alertAfterSeconds.map(DurationText.format) ?? "none"),
         ("search", source.searchable ? "on" : "off"),
         ("rows", source.layout?.rows.description ?? "-"), ("key", source.layout?.keyDescription ?? "-"),
         ("next", source.layout?.next?.description ?? "none"), ("next-param", source.layout?.nextParam ?? "none"),
         ("first-page", source.layout?.firstPage.map(String.init) ?? "-"), ("has-more", source.layout?.hasMore?.description ?? "-"),
         ("max-pages", source.layout.map { String($0.maxPages) } ?? "-"),
         ("since-param", source.layout?.incremental?.sinceParam ?? "none"),
         ("cursor-field", source.layout?.incremental?.cursorField.dotted ?? "none"),
         ("lag", source.layout?.incremental.map { $0.lagSeconds == 0 ? "0" : DurationText.format($0.lagSeconds) } ?? "-"),
         ("full-every", source.layout?.incremental.map { DurationText.format($0.fullEverySeconds) } ?? "-"),
         ("delimiter", source.kind.layoutOptions.contains("--delimiter")
            ? RecordLayout.delimiterText(source.layout?.delimiter ?? UInt8(ascii: ",")) : "-")]
    }

    static func list(json: Bool, _ context: Context) throws -> Int32 {
        // No database yet: no sources, the same as an empty one (nothing is created).
        let database = try context.openForReadingIfPresent()
        let sources = try database.map { try SourceStore($0).all() } ?? []
        let console = context.console
        if json {
            let items: [JSONValue] = sources.map { source in
                .object([
                    ("name", .string(source.name)), ("kind", .string(source.kind.rawValue)),
                    ("url", .string(source.displayURL)), ("mode", .string(source.mode.rawValue)),
                    ("ttl_s", .int(source.ttlSeconds)),
                    ("headers", .array(source.headers.map { .string($0.name) })),
                    ("unsent_headers", .array(source.unsentHeaders.map { .string(TerminalSafe.escapeControl($0)) })),
                    ("token_env", .optional(source.tokenEnv)),
                    ("oauth_token_url", .optional(source.oauth.map { Source.redacted($0.tokenURL) })),
                    ("client_id_env", .optional(source.oauth?.clientIDEnv)), ("client_secret_env", .optional(source.oauth?.clientSecretEnv)),
                    ("scope", .optional(source.oauth?.scope)),
                    ("max_bytes", .optional(source.maxBytes)),
                    ("ca_cert", .optional(source.caCert)),
                    ("max_delete", .string((source.maxDelete ?? .default).description)),
                    ("alert_after_s", .optional(source.alertAfterSeconds)),
                    ("search", .bool(source.searchable)),
                ] + (source.layout.map { layout in
                    // The layout's settings this kind takes, with the view they make.
                    let settings: [(option: String, field: String, value: JSONValue)] = [
                        ("--rows", "rows", .string(layout.rows.description)), ("--key", "key", .string(layout.keyDescription)),
                        ("--next", "next", .optional(layout.next?.description)), ("--next-param", "next_param", .optional(layout.nextParam)),
                        ("--first-page", "first_page", .optional(layout.firstPage)), ("--has-more", "has_more", .optional(layout.hasMore?.description)),
                        ("--max-pages", "max_pages", .int(layout.maxPages)),
                        ("--since-param", "since_param", .optional(layout.incremental?.sinceParam)),
                        ("--cursor-field", "cursor_field", .optional(layout.incremental?.cursorField.dotted)),
                        ("--lag", "lag_s", .optional(layout.incremental?.lagSeconds)),
                        ("--full-every", "full_every_s", .optional(layout.incremental?.fullEverySeconds)),
                        ("--delimiter", "delimiter", .string(RecordLayout.delimiterText(layout.delimiter ?? UInt8(ascii: ",")))),
                    ]
                    var fields: [(String, JSONValue)] = settings.filter { source.kind.layoutOptions.contains($0.option) }.map { ($0.field, $0.value) }
                    // An incremental source's watermark and last full sync, beside its settings.
                    if source.kind.layoutOptions.contains("--since-param") {
                        let progress = database.flatMap { try? SourceStore($0).watermark(of: source.name) }
                        fields.append(("watermark", .optional(progress?.watermark)))
                        fields.append(("last_full_at", .optional(progress?.lastFullAt)))
                    }
                    let view: String? = database.flatMap { try? RecordView.name($0.connection, source: source.name) }
                    let children = database.flatMap { try? RecordView.childViews($0.connection, source: source.name) } ?? []
                    return fields + [("view", .optional(view)), ("child_views", .array(children.map { .string($0) }))]
                } ?? []))
            }
            console.out(JSONValue.lines(items))
            return ExitCode.success
        }
        if sources.isEmpty {
            console.err("No sources yet. Add one with 'cache sources add NAME --kind \(SourceKind.allCases.map(\.rawValue).joined(separator: "|")) --url URL'.")
            return ExitCode.success
        }
        let table = TextTable(header: ["NAME", "KIND", "MODE", "TTL", "URL"])
        for source in sources {
            table.add([source.name, source.kind.rawValue, source.mode.rawValue,
                       DurationText.format(source.ttlSeconds), source.displayURL])
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
