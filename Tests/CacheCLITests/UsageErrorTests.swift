import Foundation
import Testing

/// Usage errors: the message, the usage line, the help pointer, exit 64; in this process
/// (`CLI.run`'s status is what `main` exits with), and once through the built binary.
@Suite(.gated) struct UsageErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var message: String
        var exitCode: Int32 = 64
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["fetch"], message: "cache: unknown command 'fetch'."),
        Case(arguments: ["synk"], message: "cache: unknown command 'synk'. Did you mean 'sync'?"),
        Case(arguments: ["sync", "--quite"], message: "cache: unknown option '--quite'. Did you mean '--quiet'?"),
        Case(arguments: ["list", "jokes", "--limit"], message: "cache: missing value for '--limit <n>'."),
        Case(arguments: ["list", "jokes", "--limit", "ten"], message: "cache: invalid value 'ten' for '--limit': expected a whole number, 1 or more."),
        Case(arguments: ["sources", "add", "x", "--kind", "jokes", "--url", "http://h/", "--ttl", "5 minutes"],
             message: "cache: invalid value '5 minutes' for '--ttl': expected a duration such as 90, 90s, 15m, 2h, 1d or 1h30m."),
        Case(arguments: ["sync", "--timeout", "0s"], message: "cache: invalid value '0s' for '--timeout'"),
        Case(arguments: ["sources", "add", "x", "--url", "http://h/"], message: "cache: missing expected option '--kind <kind>'."),
        Case(arguments: ["sources", "add", "x", "--kind", "bank", "--url", "http://h/"], message: "cache: invalid value 'bank' for '--kind': expected account, jokes, json, csv or ndjson."),
        Case(arguments: ["list", "a", "b"], message: "cache: unexpected argument 'b'."),
        Case(arguments: ["list", "a", "--json", "--csv"], message: "cache: '--json' and '--csv' cannot be used together."),
        Case(arguments: ["sources", "rename"], message: "cache: unknown subcommand 'sources rename'."),
        Case(arguments: ["--db"], message: "cache: missing value for '--db <path>'."),
    ]

    @Test(arguments: cases)
    func usageError(_ test: Case) throws {
        let box = try Sandbox()
        let result = box.cli(test.arguments)
        #expect(result.status == test.exitCode)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(lines.first?.hasPrefix(test.message) == true, "\(result.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: cache") == true)
        #expect(lines.last?.hasPrefix("See 'cache") == true && lines.last?.hasSuffix("--help' for more information.") == true)
    }

    @Test func aUsageErrorThroughTheBinaryExits64WithTheSameThreeLines() async throws {
        let box = try Sandbox()
        let arguments = ["synk"]
        let binary = try await box.cache(arguments)
        let inProcess = box.cli(arguments)
        #expect(binary.status == 64 && binary.stdout.isEmpty)
        #expect(binary.stderr == inProcess.stderr && binary.status == inProcess.status, "\(binary.stderr)")
    }

    @Test func unknownSourceIsNoInput() throws {
        let box = try Sandbox()
        box.cli("sources", "add", "jokes", "--kind", "jokes", "--url", CannedUpstream.baseURL + "/jokes/ten")
        for arguments in [["list", "jokse"], ["sync", "jokse"], ["sources", "remove", "jokse"]] {
            let result = box.cli(arguments)
            #expect(result.status == 66)
            #expect(result.stderr == "cache: no source named 'jokse'. Did you mean 'jokes'?\n")
        }
        // Nothing was synced by a sync that named an unknown source.
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "0")
    }

    @Test func readingWithoutADatabaseIsNoInput() throws {
        let box = try Sandbox()
        // (`status` and `sources list` print an empty list instead: ExitCodeTests.)
        for arguments in [["list", "jokes"], ["sync"], ["history"], ["diff", "jokes"]] {
            let result = box.cli(arguments)
            #expect(result.status == 66)
            #expect(result.stderr.contains("no database at"))
        }
        #expect(!FileManagerExists(box.database))
    }

    @Test func unsafeSchemesAreRefusedWhenAdded() throws {
        let box = try Sandbox()
        let result = box.cli("sources", "add", "x", "--kind", "jokes", "--url", "ftp://host/jokes")
        #expect(result.status == 78)
        #expect(result.stderr.contains("refused URL scheme 'ftp'"))
    }

    @Test func addingASourceTwiceIsRefused() throws {
        let box = try Sandbox()
        box.cli("sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        let again = box.cli("sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        #expect(again.status == 64)
        #expect(again.stderr.contains("already exists"))
    }

    @Test func helpIsTheSameThreeWays() throws {
        let box = try Sandbox()
        let a = box.cli("help", "sync"), b = box.cli("sync", "--help"), c = box.cli("sync", "-h")
        #expect(a.status == 0 && b.status == 0 && c.status == 0)
        #expect(a.stdout == b.stdout && b.stdout == c.stdout)
        #expect(a.stdout.hasPrefix("OVERVIEW: "))
        #expect(a.stdout.contains("USAGE: cache sync") && a.stdout.contains("OPTIONS:"))
        for command in ["sources", "sources add", "sources list", "sources remove", "list", "status"] {
            let help = box.cli(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: cache \(command)"), "\(command)")
        }
        let top = box.cli("--help")
        #expect(top.stdout.contains("SUBCOMMANDS:"))
        #expect(box.cli("--version").stdout.hasPrefix("cache "))
    }
}

private func FileManagerExists(_ path: String) -> Bool {
    access(path, F_OK) == 0
}

/// Every message shows what it echoes safely: an escape sequence or a bidirectional override in
/// a source name, an option's value, a query, a `--columns` name or an upstream field name is
/// written as a visible escape, never obeyed by the terminal.
@Suite struct EchoedTextTests {
    @Test func messagesEscapeWhatTheyEcho() throws {
        let box = try Sandbox()
        try box.syncedFileSource("items", "[{\"id\": 1, \"na\u{202E}me\": \"x\"}]")
        let hostile: [[String]] = [
            ["sources", "add", "bad\u{1B}[31mname", "--kind", "jokes", "--url", "http://127.0.0.1:9/"],
            ["list", "items", "--as-of", "\u{1B}[2J"],
            ["--color", "\u{1B}]0;owned\u{07}", "list", "items"],
            ["search", "items", "\"\u{1B}[31m"],
            ["list", "items", "--columns", "a\u{1B}b"],
            ["list", "items", "--columns", "nope"],  // lists the fields, one holding U+202E
            ["list", "it\u{202E}ems"],
            ["log", "items", "\u{1B}[1mkey"],
        ]
        for arguments in hostile {
            let result = box.cacheInProcess(arguments)
            #expect(result.status != 0, "\(arguments.debugDescription)")
            let shown = result.stderr + result.stdout
            #expect(!shown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E },
                    "\(arguments.debugDescription): \(shown.debugDescription)")
            #expect(shown.contains("\\u{1b}") || shown.contains("\\u{202e}"), "\(arguments.debugDescription): \(shown.debugDescription)")
        }
    }
}
