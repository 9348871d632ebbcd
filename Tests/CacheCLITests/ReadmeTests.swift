import Foundation
import Testing
@testable import CacheCLI

/// The README is the contract users rely on: these hold it to the program.
@Suite(.gated) struct ReadmeTests {
    static let readme: String = (try? String(contentsOfFile: Paths.repository + "/README.md", encoding: .utf8)) ?? ""

    /// The commands table has a row for every command, naming each of its options.
    @Test func theCommandsTableNamesEveryCommandAndOption() async throws {
        let rows = Self.readme.split(separator: "\n").filter { $0.hasPrefix("| `cache ") }.map(String.init)
        for spec in CommandTable.commands where !["", "sources"].contains(spec.name) {
            let row = try #require(rows.first { $0.hasPrefix("| `cache \(spec.name) ") || $0.hasPrefix("| `cache \(spec.name)`") },
                                   "no row for 'cache \(spec.name)' in the README's commands table")
            for option in spec.options {
                #expect(row.contains(option.name), "the README's row for 'cache \(spec.name)' does not name \(option.name)")
            }
        }
    }

    /// `cache status` prints the columns the README lists.
    @Test func theStatusTableHasTheReadmesColumns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        let documented = try #require(Self.readme.range(of: "`SOURCE KIND").map { start in
            Self.readme[Self.readme.index(after: start.lowerBound)...].prefix { $0 != "`" }
        })
        let header = try #require(try await box.cache("status").stdout.split(separator: "\n").first)
        #expect(header.split(separator: " ") == documented.split(separator: " "))
    }

    /// Each `$ cache …` example in the README followed by JSON is run against the loopback
    /// upstream, and prints objects with the same fields in the same order.
    @Test func theReadmesJSONExamplesHaveTheShapeThatIsPrinted() async throws {
        let examples = Self.jsonExamples()
        #expect(examples.count >= 6, "found \(examples.map(\.command))")
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account", "--ttl", "1h")
        try await box.cache("sources", "add", "jokes", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten", "--ttl", "1h")
        #expect(try await box.cache("sync").status == 0)
        for example in examples {
            let result = try await box.cache(example.arguments)
            #expect(result.status == 0, "\(example.command): \(result.stderr)")
            #expect(Self.firstObjectKeys(result.stdout) == Self.firstObjectKeys(example.output),
                    "'\(example.command)' prints other fields than the README shows")
        }
    }

    /// `$ cache …` lines whose next line is a JSON array, from the README's code blocks.
    static func jsonExamples() -> [(command: String, arguments: [String], output: String)] {
        let lines = readme.components(separatedBy: "\n")
        return lines.indices.dropLast().compactMap { index in
            let line = lines[index]
            guard line.hasPrefix("$ cache "), lines[index + 1].hasPrefix("[") else { return nil }
            let command = String(line.dropFirst(2)).components(separatedBy: "#")[0].trimmingCharacters(in: .whitespaces)
            return (command, command.split(separator: " ").dropFirst().map(String.init), lines[index + 1])
        }
    }

    /// The keys of the first object in a JSON array, in the order they are written.
    static func firstObjectKeys(_ json: String) -> [String] {
        var keys: [String] = []
        var depth = 0
        var inString = false, escaped = false
        var current = ""
        var lastString: String?
        for character in json {
            if inString {
                if escaped { escaped = false; current.append(character) }
                else if character == "\\" { escaped = true }
                else if character == "\"" { inString = false; lastString = current }
                else { current.append(character) }
                continue
            }
            switch character {
            case "\"": inString = true; current = ""
            case "[", "{": depth += 1
            case "]", "}":
                depth -= 1
                if depth == 1 && character == "}" { return keys }  // the end of the first object
            case ":": if depth == 2, let key = lastString { keys.append(key) }
            default: break
            }
            if character != "\"" && !character.isWhitespace && character != ":" { lastString = nil }
        }
        return keys
    }
}
