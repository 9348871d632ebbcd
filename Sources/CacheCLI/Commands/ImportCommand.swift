import ConnectorImport
import OfflineCache

/// `cache import airbyte MANIFEST`: a sources file on stdout, the report on stderr (or, with
/// `--plan`, the report alone on stdout). Nothing is written to the cache: the file is for
/// review, and `cache apply` makes it so.
enum ImportCommand {
    static func run(_ options: Command.Import, _ context: Context) throws -> Int32 {
        let console = context.console
        let bytes = try ApplyCommand.read(options.manifest, as: "manifest", limit: YAML.maxBytes)
        let imported: AirbyteImport
        do {
            let manifest = try Manifest(YAML.parse(Array(bytes)))
            let names = manifest.streams.compactMap { $0["name"]?.string }
            if let unknown = options.streams.first(where: { !names.contains($0) }) {
                throw UsageError(message: "No stream '\(unknown)' in \(options.manifest); its streams: \(names.joined(separator: ", ")).", command: "import airbyte")
            }
            imported = AirbyteImport(manifest, only: options.streams.isEmpty ? nil : options.streams, prefix: options.prefix, key: options.key)
        } catch let error as YAMLError {
            console.err("cache: import airbyte: \(options.manifest): \(error.message); nothing was written")
            return ExitCode.dataError
        }

        if options.plan {
            console.out(options.json ? imported.plan.rendered(indent: "  ") + "\n" : report(imported))
            return ExitCode.success
        }
        guard imported.streams.contains(where: { $0.definition != nil }) else {
            console.errRaw(report(imported))
            console.err("cache: import airbyte: none of the \(imported.streams.count) streams maps to a source; nothing was written")
            return ExitCode.dataError
        }
        console.out(imported.sourcesFile.rendered(indent: "  ") + "\n")
        console.errRaw(report(imported))
        return ExitCode.success
    }

    /// Each stream mapped or refused, then the variables the sources read.
    static func report(_ imported: AirbyteImport) -> String {
        var lines: [String] = []
        for stream in imported.streams {
            if let source = stream.source {
                lines.append("mapped   \(stream.stream) → source \(source)")
                lines += stream.notes.map { "         note: \($0)" }
            } else {
                lines.append("refused  \(stream.stream): \(stream.refused ?? "")")
            }
        }
        let mapped = imported.streams.filter { $0.definition != nil }.count
        lines.append("\(mapped) of \(imported.streams.count) streams mapped.")
        if !imported.variables.isEmpty {
            lines.append("Set these variables where 'cache sync' runs (only their names are in the file):")
            for variable in imported.variables {
                let about = [variable.title, variable.secret ? "secret" : nil].compactMap { $0 }.joined(separator: ", ")
                lines.append("  \(variable.name)\(about.isEmpty ? "" : "  (\(about))")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
