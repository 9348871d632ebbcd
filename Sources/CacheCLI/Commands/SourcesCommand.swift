import Foundation
import OfflineCache

enum SourcesCommand {
    static func add(_ add: Command.AddSource, _ context: Context) throws -> Int32 {
        let database = try context.open(create: true)
        let source = Source(name: add.name, kind: add.kind, url: add.url, mode: add.mode, ttlSeconds: add.ttlSeconds,
                            headers: add.headers, tokenEnv: add.tokenEnv, maxBytes: add.maxBytes, caCert: add.caCert, maxDelete: add.maxDelete,
                            alertAfterSeconds: add.alertAfterSeconds)
        try SourceStore(database).add(source)
        context.console.err("Added \(source.kind.rawValue) source '\(source.name)' (\(source.mode.rawValue), ttl \(DurationText.format(source.ttlSeconds))). Run 'cache sync \(source.name)' to fetch it.")
        return ExitCode.success
    }

    static func list(json: Bool, _ context: Context) throws -> Int32 {
        // No database yet: no sources, the same as an empty one (nothing is created).
        let sources = try context.openForReadingIfPresent().map { try SourceStore($0).all() } ?? []
        let console = context.console
        if json {
            let items: [JSONValue] = sources.map { source in
                .object([
                    ("name", .string(source.name)), ("kind", .string(source.kind.rawValue)),
                    ("url", .string(source.displayURL)), ("mode", .string(source.mode.rawValue)),
                    ("ttl_s", .int(source.ttlSeconds)),
                    ("headers", .array(source.headers.map { .string($0.name) })),
                    ("token_env", .optional(source.tokenEnv)), ("max_bytes", .optional(source.maxBytes)),
                    ("ca_cert", .optional(source.caCert)),
                    ("max_delete", .string((source.maxDelete ?? .default).description)),
                    ("alert_after_s", .optional(source.alertAfterSeconds)),
                ])
            }
            console.out(JSONValue.lines(items))
            return ExitCode.success
        }
        if sources.isEmpty {
            console.err("No sources yet. Add one with 'cache sources add NAME --kind account|jokes --url URL'.")
            return ExitCode.success
        }
        let table = TextTable(header: ["NAME", "KIND", "MODE", "TTL", "URL"])
        for source in sources {
            table.add([source.name, source.kind.rawValue, source.mode.rawValue,
                       DurationText.format(source.ttlSeconds), source.displayURL])
        }
        console.out(table.render())
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
            guard let answer = readLine(), ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else {
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

/// Columns padded to their widest cell.
final class TextTable {
    private var rows: [[String]]
    init(header: [String]) { rows = [header] }
    func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
