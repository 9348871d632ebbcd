import Foundation
import Testing

/// The library's reference: every public declaration has a doc comment, and DocC builds the
/// catalogue (`Scripts/docs`) without a warning.
@Suite(.gated) struct DocumentationTests {
    /// Members that implement a protocol's requirement take its documentation.
    static var witnesses: Regex<(Substring, Substring)> { #/public (var description|var debugDescription|func hash\(into|static func ==|init\(from decoder|init\(stringLiteral|init\(arrayLiteral|init\(dictionaryLiteral|func encode\(to)/# }

    /// `file:line: declaration` for each public declaration without a `///` comment above it
    /// (attributes between them allowed).
    static func undocumented(in folder: String) throws -> [String] {
        var found: [String] = []
        let files = (FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []).filter { $0.hasSuffix(".swift") }
        for file in files.sorted() where !file.hasSuffix("EmbeddedMigrations.swift") {
            let lines = try String(contentsOfFile: folder + "/" + file, encoding: .utf8).components(separatedBy: "\n")
            // Swift's Regex is slow in a debug build: only lines that say `public` are matched.
            for (index, line) in lines.enumerated() where line.contains("public") {
                let text = line.trimmingCharacters(in: .whitespaces)
                guard text.firstMatch(of: #/^(@[\w().:,* "]+\s+)*public\s/#) != nil, !text.hasPrefix("public extension"),
                      text.firstMatch(of: witnesses) == nil else { continue }
                var above = index - 1
                // Lines that hold only attributes (`@MainActor`) may stand between.
                while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).wholeMatch(of: #/(@[\w().:,* "]+\s*)+/#) != nil { above -= 1 }
                let comment = above >= 0 ? lines[above].trimmingCharacters(in: .whitespaces) : ""
                if !comment.hasPrefix("///") && !comment.hasSuffix("*/") { found.append("\(file):\(index + 1): \(text)") }
            }
        }
        return found
    }

    @Test func everyPublicDeclarationIsDocumented() throws {
        let missing = try Self.undocumented(in: Paths.repository + "/Sources/OfflineCache")
            + Self.undocumented(in: Paths.repository + "/Sources/OfflineCacheURLSession")
        #expect(missing.isEmpty, "\(missing.count) undocumented: \(missing.prefix(20).joined(separator: "\n"))")
    }

    /// Issue 56: every Swift block of the DocC articles is compiled — it is in Examples/states'
    /// `docc-examples` as written (its `import` lines aside), which ExampleTests builds — or
    /// marked an illustration just above it, saying why (`<!-- swift: an illustration: … -->`).
    @Test func everyDocCBlockIsCompiledOrAnIllustration() throws {
        let catalogue = Paths.repository + "/Sources/OfflineCache/OfflineCache.docc"
        let compiled = try String(contentsOfFile: Paths.repository + "/Examples/states/Sources/docc-examples/main.swift", encoding: .utf8)
        var blocks = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: catalogue).filter({ $0.hasSuffix(".md") }).sorted() {
            let lines = try String(contentsOfFile: catalogue + "/" + file, encoding: .utf8).components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                defer { index += 1 }
                guard lines[index] == "```swift" else { continue }
                let end = try #require(lines[(index + 1)...].firstIndex(of: "```"), "\(file):\(index + 1): a block with no end")
                blocks += 1
                let marked = index > 0 && lines[index - 1].hasPrefix("<!-- swift: an illustration: ") && lines[index - 1].count > 40
                let code = lines[(index + 1)..<end].filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
                #expect(marked || compiled.contains(code + "\n"), "\(file):\(index + 1): a Swift block neither compiled in docc-examples nor marked an illustration")
            }
        }
        #expect(blocks >= 4, "the articles' blocks were not found")
    }

    /// The check finds an undocumented declaration: it is not one that cannot fail.
    @Test func theCheckFindsAnUndocumentedDeclaration() throws {
        let box = try Sandbox()
        try "/// Documented.\npublic struct A {\n    /// Too.\n    @inlinable public var b: Int { 1 }\n    public var c = 2\n    public var description: String { \"\" }\n}\n"
            .write(toFile: box.folder + "/A.swift", atomically: true, encoding: .utf8)
        #expect(try Self.undocumented(in: box.folder) == ["A.swift:5: public var c = 2"])
    }

    /// DocC builds the catalogue from the test build's module, with warnings as errors.
    @Test func theReferenceBuildsWithoutAWarning() async throws {
        let box = try Sandbox()
        let result = try await box.run(Paths.repository + "/Scripts/docs", ["--no-build"])
        #expect(result.status == 0, "\(result.stdout.suffix(3000)) \(result.stderr.suffix(3000))")
        #expect(FileManager.default.fileExists(atPath: Paths.repository + "/.build/docs/data/documentation/offlinecache/cache.json"),
                "no page for Cache")
    }
}
