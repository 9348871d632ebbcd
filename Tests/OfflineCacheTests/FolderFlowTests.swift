import Foundation
import Testing

/// The folders of each module are layers, and code uses only its own layer and those below it:
/// a file that names a type declared in a folder above its own breaks the rule, and so does one
/// that uses a member an extension in a folder above adds to a lower type (`kind.defaultMode`
/// in `Model/` when `Kinds/` declares it). The layers are
/// listed here and in the README's layout section; a new folder must be placed in the list.
@Suite(.computing) struct FolderFlowTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Bottom first. "." is the files directly in the module's folder.
    static let layers: [String: [String]] = [
        "OfflineCache": ["Platform", "Support", "Model", "HTTP", "JSON", "SQLite", "Kinds", "Store", "Sync", "Read", "Inspect", "Shapes", "Outbox", "Client"],
        "CacheCLI": ["Interface", "Output", "Refresh", "Commands", "."],
    ]

    @Test(arguments: ["OfflineCache", "CacheCLI"])
    func noFolderUsesOneAboveIt(module: String) throws {
        let root = Self.sources.appendingPathComponent(module)
        let paths = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".swift") }
        let files = try paths.map { path in
            SwiftFile(path: path, text: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
        let layers = try #require(Self.layers[module])
        let unplaced = Set(files.map(\.folder)).subtracting(layers)
        #expect(unplaced.isEmpty, "folders not placed in a layer: \(unplaced.sorted())")
        #expect(files.count > 10)
        let found = Self.violations(files, layers: layers)
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    /// The check itself finds a use of a type from a layer above, and only that.
    @Test func theCheckFindsAnUpwardUse() {
        let files = [
            SwiftFile(path: "Low/A.swift", text: "struct Low {}\n// High, in a comment, is not a use\nlet x = Low(), y = \"High, in text\", z = raiseHigh()\n"),
            SwiftFile(path: "High/B.swift", text: "public struct High { let low: Low }\n"),
            SwiftFile(path: "Low/C.swift", text: "extension Low {\n    func up() -> High { High(low: self) }\n}\n"),
            SwiftFile(path: "Low/D.swift", text: "let sql = \"\"\"\n    SELECT High FROM t WHERE \\(High.column) = 1\n    \"\"\"\n"),
        ]
        #expect(Self.violations(files, layers: ["Low", "High"]) == ["Low/C.swift:2 uses High (High)", "Low/D.swift:2 uses High (High)"])
    }

    /// ...and a member that an extension in a higher folder adds to a lower type, used below;
    /// a name a lower folder declares too (`count`) is not that member.
    @Test func theCheckFindsAMemberAddedAbove() {
        let files = [
            SwiftFile(path: "Low/A.swift", text: "enum Kind {\n    case a\n    var count: Int { 1 }\n}\nlet mode = Kind.a.defaultMode, n = Kind.a.count\n"),
            SwiftFile(path: "High/B.swift", text: "extension Kind {\n    package var defaultMode: Int { 0 }\n    static func count() {}\n}\nlet m = Kind.a.defaultMode\n"),
        ]
        #expect(Self.violations(files, layers: ["Low", "High"]) == ["Low/A.swift:5 uses .defaultMode (High)"])
    }

    struct SwiftFile {
        var path: String
        var text: String
        var folder: String { path.contains("/") ? String(path.prefix { $0 != "/" }) : "." }
    }

    /// Each use of a type declared (at the top level of a file) in a folder above the file's own.
    static func violations(_ files: [SwiftFile], layers: [String]) -> [String] {
        let declaration = #/^(?:(?:public|package|internal|fileprivate|private|final|indirect)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)/#
        // The regex runs only on lines with one of its words (Regex is slow: seconds over the sources).
        let declares = ["struct", "enum", "class", "protocol", "actor", "typealias"]
        var level: [String: (folder: String, level: Int)] = [:]
        for file in files {
            guard let fileLevel = layers.firstIndex(of: file.folder) else { continue }
            for line in file.text.split(separator: "\n") where declares.contains(where: { line.contains($0) }) {
                if let match = line.firstMatch(of: declaration) {
                    let name = String(match.1)
                    if (level[name]?.level ?? .max) > fileLevel { level[name] = (file.folder, fileLevel) }
                }
            }
        }
        let added = addedMembers(files, layers: layers, typeLevels: level.mapValues(\.level))
        var found: [String] = []
        for file in files.sorted(by: { $0.path < $1.path }) {
            guard let fileLevel = layers.firstIndex(of: file.folder) else { continue }
            for (number, code) in codeLines(file.text).enumerated() {
                var named = Set<String>()
                for (name, afterDot) in identifiers(code) {
                    if name.first!.isUppercase, let owner = level[name], owner.level > fileLevel, named.insert(name).inserted {
                        found.append("\(file.path):\(number + 1) uses \(name) (\(owner.folder))")
                    }
                    if afterDot, !name.first!.isUppercase, let owner = added[name], owner.level > fileLevel, named.insert("." + name).inserted {
                        found.append("\(file.path):\(number + 1) uses .\(name) (\(owner.folder))")
                    }
                }
            }
        }
        return found
    }

    /// The members that only extensions of lower types, in a folder above those types, declare:
    /// by name, with that folder. A name declared anywhere at or below a folder (another type's
    /// `count`) is not counted as the extension's there.
    static func addedMembers(_ files: [SwiftFile], layers: [String], typeLevels: [String: Int]) -> [String: (folder: String, level: Int)] {
        let member = #/^\s+(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private|static|class|mutating|nonmutating|nonisolated|override|final|indirect|lazy)\s+)*(?:func|var|let|case)\s+`?([a-z_]\w*)/#
        let extensionLine = #/^(?:(?:public|package|internal|fileprivate|private)\s+)?extension\s+([A-Z]\w*)/#
        var lowest: [String: Int] = [:]
        var extended: [String: (folder: String, level: Int)] = [:]
        for file in files {
            guard let fileLevel = layers.firstIndex(of: file.folder) else { continue }
            var extendsLower = false
            for line in file.text.split(separator: "\n") {
                if line.contains("extension"), let match = line.firstMatch(of: extensionLine) {
                    extendsLower = (typeLevels[String(match.1)] ?? .max) < fileLevel
                } else if line.first.map({ !$0.isWhitespace }) ?? false {
                    extendsLower = false
                }
                // (The regex only on lines with one of its words, as above.)
                guard ["func", "var", "let", "case"].contains(where: { line.contains($0) }),
                      let match = line.firstMatch(of: member) else { continue }
                let name = String(match.1)
                lowest[name] = min(lowest[name] ?? .max, fileLevel)
                // Only a member at the extension's own depth: not a local in one of its bodies.
                if extendsLower, line.prefix(while: \.isWhitespace).count == 4, (extended[name]?.level ?? .max) > fileLevel {
                    extended[name] = (file.folder, fileLevel)
                }
            }
        }
        return extended.filter { $0.value.level <= lowest[$0.key] ?? .max }
    }

    /// The names in a line of code (what `[A-Za-z_]\w*` matches), each with whether a dot stands
    /// before it: a scan of its bytes, as two regexes over every line of the sources took seconds.
    static func identifiers(_ code: String) -> [(name: String, afterDot: Bool)] {
        func starts(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) || byte == 95 }
        // Digits, and any byte of a character beyond ASCII (\w takes letters of every script).
        func continues(_ byte: UInt8) -> Bool { starts(byte) || (48...57).contains(byte) || byte >= 0x80 }
        let bytes = Array(code.utf8)
        var found: [(name: String, afterDot: Bool)] = []
        var index = 0
        while index < bytes.count {
            guard starts(bytes[index]) else { index += 1; continue }
            let start = index
            while index < bytes.count, continues(bytes[index]) { index += 1 }
            found.append((String(decoding: bytes[start..<index], as: UTF8.self), start > 0 && bytes[start - 1] == UInt8(ascii: ".")))
        }
        return found
    }

    /// Each line's code: without comments, and of string literals (SQL, messages) only what
    /// they interpolate.
    static func codeLines(_ text: String) -> [String] {
        var inMultiline = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var code = "", inString = inMultiline, index = line.startIndex
            while index < line.endIndex {
                let rest = line[index...]
                if rest.hasPrefix("\"\"\"") {
                    inString.toggle(); inMultiline.toggle()
                    index = line.index(index, offsetBy: 3)
                } else if inString, rest.hasPrefix("\\(") {
                    // An interpolation is code, up to its closing parenthesis.
                    var depth = 0
                    index = line.index(after: index)
                    while index < line.endIndex {
                        if line[index] == "(" { depth += 1 }
                        if line[index] == ")" { depth -= 1 }
                        code.append(line[index])
                        index = line.index(after: index)
                        if depth == 0 { break }
                    }
                } else if inString, rest.hasPrefix("\\") {
                    index = line.index(index, offsetBy: min(2, rest.count))
                } else if rest.hasPrefix("\"") {
                    if !inMultiline { inString.toggle() }
                    index = line.index(after: index)
                } else if !inString, rest.hasPrefix("//") {
                    break
                } else {
                    if !inString { code.append(line[index]) }
                    index = line.index(after: index)
                }
            }
            return code
        }
    }
}
