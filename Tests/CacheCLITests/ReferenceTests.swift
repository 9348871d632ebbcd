import Foundation
import Testing
@testable import CacheCLI

/// `docs/reference.md`'s "Every option" section is made from the command table, the same
/// declarations the parser, help, completions and man page read: a changed option, default or
/// help text fails here until the section is written again.
@Suite(.gated) struct ReferenceTests {
    static let file = Paths.repository + "/docs/reference.md"
    static let begin = "<!-- Every option: made from the command table (Interface/CommandTable.swift); "
        + "write it again with CACHE_WRITE_REFERENCE=1 swift test --filter ReferenceTests -->"
    static let end = "<!-- end of every option -->"

    /// Each command's usage, then its options: the label, and the help with its default.
    static var section: String {
        var text = begin + "\n\n## Every option\n\nWhat `cache COMMAND --help` prints, for every command; the global options "
            + CommandTable.globalOptions.map { "`\($0.label)`" }.joined(separator: ", ") + " go with any command that reads a cache.\n"
        for spec in CommandTable.commands where !spec.name.isEmpty && spec.subcommands.isEmpty {
            text += "\n### `cache \(spec.name)`\n\n`\(spec.usage)`\n"
            guard !spec.options.isEmpty else { continue }
            text += "\n| option | what it does |\n|---|---|\n"
            for option in spec.options {
                text += "| `\(option.label.replacingOccurrences(of: "|", with: "\\|"))` | \(option.help.replacingOccurrences(of: "|", with: "\\|")) |\n"
            }
        }
        return text + "\n" + end + "\n"
    }

    @Test func everyOptionIsInTheReferenceAsDeclared() throws {
        let text = try String(contentsOfFile: Self.file, encoding: .utf8)
        let start = text.range(of: Self.begin)?.lowerBound ?? text.endIndex
        let stop = text.range(of: Self.end).map { text.index(after: text[$0.upperBound...].firstIndex(of: "\n") ?? $0.upperBound) } ?? text.endIndex
        let current = String(text[start..<max(start, stop)])
        if ProcessInfo.processInfo.environment["CACHE_WRITE_REFERENCE"] == "1", current != Self.section {
            let before = text[..<start].hasSuffix("\n\n") || start == text.endIndex ? String(text[..<start]) : String(text[..<start]) + "\n"
            try (before + Self.section + String(text[stop...])).write(toFile: Self.file, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == Self.section, "docs/reference.md's option section is out of date: CACHE_WRITE_REFERENCE=1 swift test --filter ReferenceTests writes it")
    }
}
