/// `cache import` and its one source of definitions so far, Airbyte's manifests, declared as every
/// command is (see `CommandTable.declarations`, which lists them in their place).
extension CommandTable {
    static let imports: [CommandDeclaration] = [
        CommandDeclaration(CommandSpec(
            name: "import",
            overview: "Make a sources file from an API description written for another tool, for review before 'cache apply' changes anything.",
            subcommands: [("airbyte", "Read an Airbyte connector's manifest.yaml (a DeclarativeSource): a source per stream that maps.")],
            usesDatabase: false)) { _, _ throws(UsageError) in .help("import") },
        CommandDeclaration(CommandSpec(
            name: "import airbyte",
            overview: "Read an Airbyte connector's manifest.yaml (a DeclarativeSource) and print a sources file, a source per stream, for 'cache apply'; on stderr, each stream mapped or refused with the component and why, and the variables to set. The manifest and its licence are yours to bring (its metadata.yaml names the licence). Nothing is written to the cache.",
            arguments: [ArgumentSpec(label: "<manifest>", help: "The manifest.yaml, or - for standard input.", completion: .file)],
            examples: ["cache import airbyte manifest.yaml > sources.json && cache apply sources.json",
                       "cache import airbyte manifest.yaml --plan --json",
                       "cache import airbyte manifest.yaml --streams users,teams --prefix acme-"],
            usesDatabase: false),
            start: Command.Import(),
            options: [.values("--streams", "names", help: "Only these streams, by the manifest's names; repeat it or give a list.", lists: true, \.streams, .text),
                      .value("--prefix", "text", help: "Put this before each stream's name to name its source.", \.prefix, .text),
                      .value("--key", "fields", help: "The key of a stream whose manifest gives no primary_key.", \.key, .text),
                      .flag("--plan", help: "Print only the report: each stream mapped or refused, and the variables (exit 0 for any manifest that reads).", \.plan),
                      .flag("--json", help: "With --plan, print the report as one JSON object.", \.json)]) { options, positionals, command throws(UsageError) in
            var options = options
            options.manifest = try Positionals.exactlyOne(positionals, "<manifest>", command)
            return .importAirbyte(options)
        },
    ]
}
