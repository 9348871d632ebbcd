import Foundation
import Testing
@testable import OfflineCache

/// The kinds are one registry (Kinds/SourceKind.swift, Kinds/RowStorage.swift) and a folder
/// each: nothing outside Sources/OfflineCache/Kinds/ compares or switches on a source's kind or
/// its storage, so a new kind is found by the compiler in its definition, not missed by a `==`
/// that falls through. (Renderers switch on the rows themselves, `CachedRows`, exhaustively.)
@Suite(.computing) struct KindRegistryTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// A source's kind against one of the kinds, a switch on it, or a kind named outright: every
    /// kind and storage the registry has, so a kind added later is checked too (ndjson was not).
    static var patterns: [String] {
        let kinds = SourceKind.allCases.map(\.rawValue).joined(separator: "|")
        let storages = RowStorage.allCases.map { String(describing: $0) }.joined(separator: "|")
        return [
            #"\bkind\s*(==|!=)\s*\.("# + kinds + #")\b"#,
            #"\.("# + kinds + #")\s*(==|!=)\s*\w*\.?kind\b"#,
            #"switch\s+[\w.]*(source|current)\.kind\s*\{"#,
            #"\bSourceKind\.("# + kinds + #")\b"#,
            #"\b(source|current|before|after)\.kind\s*\?"#,
            // The same for the storage kinds share.
            #"\bstorage\s*(==|!=)"#,
            #"(==|!=)\s*\.?("# + storages + #")\b.*\bstorage\b"#,
            #"switch\s+[\w.]*storage\s*\{"#,
            #"\bRowStorage\.("# + storages + #")\b"#,
        ]
    }

    /// The patterns find what they are for, for every kind: a check that cannot fail is none.
    @Test func thePatternsFindAComparisonOfEveryKind() throws {
        let regexes = try Self.patterns.map { try Regex($0).wordBoundaryKind(.simple) }
        for kind in SourceKind.allCases {
            for line in ["if source.kind == .\(kind.rawValue) {", "let x = SourceKind.\(kind.rawValue)"] {
                #expect(regexes.contains { line.contains($0) }, "\(line) is not found")
            }
        }
        for storage in RowStorage.allCases {
            #expect(regexes.contains { "case RowStorage.\(storage):".contains($0) }, "\(storage)")
        }
        #expect(!regexes.contains { "let kind = source.kind.rawValue".contains($0) })
    }

    @Test func nothingOutsideTheKindsFolderComparesTheKind() throws {
        // Simple word boundaries: by Unicode's rules `source.kind` is one word.
        let regexes = try Self.patterns.map { try Regex($0).wordBoundaryKind(.simple) }
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: Self.sources.path)?.compactMap { $0 as? String } ?? []
        let swiftFiles = files.filter { $0.hasSuffix(".swift") && !$0.hasPrefix("OfflineCache/Kinds/") }
        #expect(swiftFiles.count > 50)
        for file in swiftFiles {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            // Every pattern names a kind or a storage ("kind", "Kind", "storage", "Storage"): the
            // regexes run only on the lines that do, a tenth of the time.
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where (line.contains("ind") || line.contains("torage")) && regexes.contains(where: { line.contains($0) }) {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func everyKindHasAStorageAndTheStoragesTheirViews() {
        // Every storage is some kind's, and every kind's storage is one of them.
        #expect(Set(SourceKind.allCases.map { String(describing: $0.storage) }) == Set(RowStorage.allCases.map { String(describing: $0) }))
        for kind in SourceKind.allCases {
            // A kind that keeps records takes a key: its records are found by it.
            #expect(kind.keepsRecords == kind.options.contains(.key), "\(kind)")
        }
        // A view defined twice is the newest schema's first, then a file migrated part way's,
        // which reads fewer tables (DerivedViews makes the first whose tables exist).
        let views = RowStorage.allCases.flatMap(\.views)
        for (index, view) in views.enumerated() {
            for earlier in views[..<index] where earlier.name == view.name {
                #expect(Set(view.reads).isStrictSubset(of: earlier.reads), "\(view.name)")
            }
        }
        #expect(Set(views.map(\.name)).sorted() == ["cached_accounts", "cached_jokes", "cached_records", "cached_records_created",
                                                     "cached_records_synced", "cached_transactions"])
    }
}
