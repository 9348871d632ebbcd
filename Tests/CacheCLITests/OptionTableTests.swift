import Foundation
import Testing
@testable import CacheCLI

/// Each option is declared once, in `CommandTable`; these hold the parser, the help and the
/// usage lines to that declaration.
@Suite(.gated) struct OptionTableTests {
    /// The arguments each command needs before an option can be tried on it.
    static let baseArguments: [String: [String]] = [
        "sources add": ["x", "--kind", "json", "--url", "http://h/", "--key", "id", "--next", "$.next"],
        "sources set": ["x", "--ttl", "1h"],
        "sources list": [], "sources remove": ["x"], "sync": ["x"], "list": ["x"], "status": [], "metrics": [],
        "history": [], "diff": ["x"], "export": ["x"], "sql": ["SELECT 1"], "check": [], "prune": ["--keep", "1d"],
        "version": [], "log": ["x", "1"], "search": ["x", "word"], "reindex": [], "serve": [],
    ]

    /// `sources add`'s base for `option`: a csv source's own options are tried on a csv source,
    /// paging options with the style they belong to.
    static func addBase(_ option: String) -> [String] {
        let json = ["x", "--kind", "json", "--url", "http://h/", "--key", "id"]
        switch option {
        case "--delimiter": return ["x", "--kind", "csv", "--url", "http://h/", "--key", "id"]
        case "--first-page", "--page-size": return json + ["--next", "page", "--next-param", "p"]
        case "--has-more": return json + ["--next", "last-key", "--next-param", "p", "--has-more", "$.has_more"]
        case "--basic-user-env", "--basic-password-env":
            return ["x", "--kind", "jokes", "--url", "http://h/", "--basic-user-env", "USER"]
        case "--oauth-token-url", "--client-id-env", "--client-secret-env", "--scope", "--refresh-token-env":
            return ["x", "--kind", "jokes", "--url", "http://h/", "--oauth-token-url", "https://h/token", "--client-id-env", "ID",
                    "--client-secret-env", "SECRET"]
        case "--since-param", "--cursor-field", "--lag", "--since-format", "--full-every":
            return json + ["--since-param", "since", "--cursor-field", "updated"]
        default: return baseArguments["sources add"]!
        }
    }

    /// A value each placeholder accepts, unlike the base arguments' own.
    static func sample(_ option: OptionSpec) -> String {
        if option.name == "--rows" { return "$.items" }
        if option.name == "--has-more" { return "$.more" }
        if option.name == "--next" { return "link" }
        return switch option.value ?? "" {
        case "url": "https://other/"
        case "duration": "3h"
        case "mode": "merge"
        case "header": "X-Api-Version: 2"
        case "var": "SOME_TOKEN"
        case "n": "3"
        case "n|p%": "10%"
        case "file": #filePath
        case "kind": "json"
        case "path": "/tmp/metrics.prom"
        case "fields": "uuid"
        case "name": "cursor"
        case "c": ";"
        case "time": "2026-11-30T09:00:00Z"
        case "format": "%Y-%m-%d"
        case "on|off": "off"
        case "text|json": "json"
        case "host:port": "127.0.0.1:9000"
        case "origin": "https://dash.example.org"
        case "template": "https://other/items/{key}"
        case "put|patch": "put"
        case "if-match|none": "none"
        default: "value"
        }
    }

    /// Options that restate the default, so they parse to the same command.
    static let defaults: Set<String> = ["export --json", "sources add --kind"]

    @Test(arguments: CommandTable.commands.filter { baseArguments[$0.name] != nil }.map(\.name))
    func everyDeclaredOptionParsesAndChangesTheCommand(_ name: String) async throws {
        let words = name.split(separator: " ").map(String.init)
        for option in CommandTable.spec(name).options {
            // A csv source's own options are tried on a csv source, paging options with their style.
            let base = name == "sources add" ? Self.addBase(option.name) : Self.baseArguments[name]!
            let plain = try CommandParser.parse(words + base)
            let given = option.value.map { _ in [option.name, Self.sample(option)] } ?? [option.name]
            // Options already in the base arguments are tried with another value.
            let arguments = words + Self.without(option.name, base) + given
            let parsed = try CommandParser.parse(arguments)
            if !Self.defaults.contains("\(name) \(option.name)") {
                #expect(parsed != plain, "'\(arguments.joined(separator: " "))' parses as if the option were not there")
            }
            if let short = option.short {
                #expect(try CommandParser.parse(words + base + [short]) == parsed, "\(short) is not \(option.name)")
            }
        }
    }

    /// An option is named once, in its declaration; the groups that name options again (one of
    /// several, required) name only declared ones, so a misspelling there fails here.
    @Test func theGroupsNameOnlyDeclaredOptions() {
        for spec in CommandTable.commands {
            let declared = Set(spec.options.map(\.name))
            for name in spec.exclusive.flatMap({ $0 }) + spec.required {
                #expect(declared.contains(name), "'cache \(spec.name)' groups '\(name)', which it does not declare")
            }
        }
    }

    /// A default is the parsed command's start value, and help shows that very value.
    @Test func helpShowsTheDefaultsTheParserStartsFrom() throws {
        let sync = try #require(CommandTable.spec("sync").option("--parallel"))
        #expect(sync.help.hasSuffix("(default: \(Command.Sync().parallel)).") && Command.Sync().parallel == 4, "\(sync.help)")
        let serve = CommandTable.spec("serve")
        #expect(serve.option("--listen")?.help.contains("(default: 127.0.0.1:8765)") == true)
        #expect(serve.option("--refresh-interval")?.help.contains("(default: 10s)") == true)
        // `--access-log-format` implies `--access-log`, as its help says.
        guard case .serve(let parsed) = try CommandParser.parse(["serve", "--access-log-format", "json"]).command else { Issue.record("not serve"); return }
        #expect(parsed.accessLog && parsed.accessLogFormat == "json")
    }

    /// An option whose value may be left out is a flag alone and takes its value only as
    /// `--opt=VALUE`, never from the next word (`edit --wait[=DUR]` is the first to need it).
    @Test func anOptionalValueIsGivenOnlyWithAnEqualsSign() throws {
        struct Waiting { var wait: Int? }
        let declaration = CommandDeclaration(CommandSpec(name: "try", overview: "A test command.",
                                                         arguments: [ArgumentSpec(label: "<name>", help: "Any.", optional: true)]),
                                             start: Waiting(),
                                             options: [.optionalValue("--wait", "duration", help: "Wait.", bare: 30, \.wait, .duration())]) { waiting, positionals, _ in
            .sourcesRemove(positionals.joined(separator: ",") + "|" + String(describing: waiting.wait), yes: false)
        }
        func parsed(_ arguments: [String]) throws -> String {
            guard case .sourcesRemove(let text, _) = try declaration.parse(arguments) else { return "" }
            return text
        }
        #expect(try parsed([]) == "|nil")
        #expect(try parsed(["--wait"]) == "|Optional(30)")
        #expect(try parsed(["--wait=2m"]) == "|Optional(120)")
        #expect(try parsed(["--wait", "x"]) == "x|Optional(30)", "the next word is never its value")
        #expect(throws: UsageError.self) { try parsed(["--wait=soon"]) }
        #expect(declaration.spec.options[0].label == "--wait[=<duration>]")
        #expect(declaration.spec.usage == "cache try [<name>] [--wait[=<duration>]]")
    }

    @Test func anOptionNotDeclaredIsRefused() {
        for spec in CommandTable.commands where Self.baseArguments[spec.name] != nil {
            let words = spec.name.split(separator: " ").map(String.init)
            #expect(throws: UsageError.self) { try CommandParser.parse(words + Self.baseArguments[spec.name]! + ["--undeclared"]) }
        }
    }

    /// Through the binary: every command's help names its usage line and every option it takes.
    @Test func helpListsEveryOptionTheParserTakes() async throws {
        let box = try Sandbox()
        for spec in CommandTable.commands {
            let help = try await box.cache(spec.name.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.status == 0, "\(spec.name)")
            #expect(help.stdout.contains("USAGE: \(spec.usage)\n"), "\(spec.name)")
            for option in spec.allOptions where !spec.name.isEmpty {
                #expect(help.stdout.contains("  \(option.label)"), "'cache \(spec.name) --help' does not list \(option.label)")
                if option.name != "--help" && !CommandTable.globalOptions.contains(where: { $0.name == option.name }) {
                    #expect(spec.usage.contains(option.name), "the usage of '\(spec.name)' does not show \(option.name)")
                }
            }
            for argument in spec.arguments {
                #expect(spec.usage.contains(argument.label), "the usage of '\(spec.name)' does not show \(argument.label)")
            }
        }
    }

    private static func without(_ option: String, _ arguments: [String]) -> [String] {
        guard let index = arguments.firstIndex(of: option) else { return arguments }
        var rest = arguments
        rest.removeSubrange(index...min(index + 1, rest.count - 1))
        return rest
    }
}
