import ConnectorImport
import OfflineCache

/// `cache import airbyte MANIFEST`: a sources file on stdout, the report on stderr (or, with
/// `--plan`, the report alone on stdout). Nothing is written to the cache: the file is for
/// review, and `cache apply` makes it so.
enum ImportCommand {
    static func run(_ options: Command.Import, _ context: Context) throws -> Int32 {
        let console = context.console
        // A file too large to be a manifest is a bad file (65), refused before it is read.
        if options.manifest != "-", let status = FileSystem.status(options.manifest), status.kind == .regular, status.size > YAML.maxBytes {
            let size = status.size
            console.err("cache: import airbyte: \(options.manifest) is \(size) bytes; a manifest is at most \(YAML.maxBytes >> 20) MiB; nothing was written")
            return ExitCode.dataError
        }
        let bytes = try ApplyCommand.read(options.manifest, as: "manifest", limit: YAML.maxBytes)
        let imported: AirbyteImport
        do {
            let manifest = try Manifest(YAML.parse(Array(bytes)))
            let names = manifest.streams.enumerated().map { AirbyteImport.streamName($1, at: $0) }
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
