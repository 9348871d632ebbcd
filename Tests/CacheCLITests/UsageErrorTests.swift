import Foundation
import Testing

/// Usage errors through the built binary: the message, the usage line, the help pointer, exit 64.
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
    func usageError(_ test: Case) async throws {
        let box = try Sandbox()
        let result = try await box.cache(test.arguments)
        #expect(result.status == test.exitCode)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(lines.first?.hasPrefix(test.message) == true, "\(result.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: cache") == true)
        #expect(lines.last?.hasPrefix("See 'cache") == true && lines.last?.hasSuffix("--help' for more information.") == true)
    }

    @Test func unknownSourceIsNoInput() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        for arguments in [["list", "jokse"], ["sync", "jokse"], ["sources", "remove", "jokse"]] {
            let result = try await box.cache(arguments)
            #expect(result.status == 66)
            #expect(result.stderr == "cache: no source named 'jokse'. Did you mean 'jokes'?\n")
        }
        // Nothing was synced by a sync that named an unknown source.
        #expect(try rows(box.database, "SELECT count(*) AS n FROM sync_runs").first?["n"] == "0")
    }

    @Test func readingWithoutADatabaseIsNoInput() async throws {
        let box = try Sandbox()
        // (`status` and `sources list` print an empty list instead: ExitCodeTests.)
        for arguments in [["list", "jokes"], ["sync"], ["history"], ["diff", "jokes"]] {
            let result = try await box.cache(arguments)
            #expect(result.status == 66)
            #expect(result.stderr.contains("no database at"))
        }
        #expect(!FileManagerExists(box.database))
    }

    @Test func unsafeSchemesAreRefusedWhenAdded() async throws {
        let box = try Sandbox()
        let result = try await box.cache("sources", "add", "x", "--kind", "jokes", "--url", "ftp://host/jokes")
        #expect(result.status == 78)
        #expect(result.stderr.contains("refused URL scheme 'ftp'"))
    }

    @Test func addingASourceTwiceIsRefused() async throws {
        let box = try Sandbox()
        try await box.cache("sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        let again = try await box.cache("sources", "add", "x", "--kind", "jokes", "--url", "http://127.0.0.1:9/")
        #expect(again.status == 64)
        #expect(again.stderr.contains("already exists"))
    }

    @Test func helpIsTheSameThreeWays() async throws {
        let box = try Sandbox()
        let a = try await box.cache("help", "sync"), b = try await box.cache("sync", "--help"), c = try await box.cache("sync", "-h")
        #expect(a.status == 0 && b.status == 0 && c.status == 0)
        #expect(a.stdout == b.stdout && b.stdout == c.stdout)
        #expect(a.stdout.hasPrefix("OVERVIEW: "))
        #expect(a.stdout.contains("USAGE: cache sync") && a.stdout.contains("OPTIONS:"))
        for command in ["sources", "sources add", "sources list", "sources remove", "list", "status"] {
            let help = try await box.cache(command.split(separator: " ").map(String.init) + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: cache \(command)"), "\(command)")
        }
        let top = try await box.cache("--help")
        #expect(top.stdout.contains("SUBCOMMANDS:"))
        #expect(try await box.cache("--version").stdout.hasPrefix("cache "))
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
