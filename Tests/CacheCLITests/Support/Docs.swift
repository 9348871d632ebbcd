import Foundation

/// The documentation users read: the README (the front door) and the manual it links to,
/// `docs/*.md`. Tests that hold a recipe to the program look for it in `manual`, wherever it lives.
enum Docs {
    static let readme = text("README.md")
    /// The manual's pages, by path from the repository's root (`docs/serve.md`).
    static let pages: [String: String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Paths.repository + "/docs")) ?? []
        return Dictionary(uniqueKeysWithValues: names.filter { $0.hasSuffix(".md") }.sorted().map { ("docs/" + $0, text("docs/" + $0)) })
    }()
    /// The README and every page of the manual, one after another.
    static let manual = ([readme] + pages.keys.sorted().map { pages[$0]! }).joined(separator: "\n")

    static func text(_ path: String) -> String {
        (try? String(contentsOfFile: Paths.repository + "/" + path, encoding: .utf8)) ?? ""
    }

    /// A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped,
    /// spaces made `-` (a repeated heading gets `-1`, `-2`, … after the first).
    static func anchors(of markdown: String) -> Set<String> {
        var anchors = Set<String>(), seen: [String: Int] = [:]
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }
            guard title.first == " " else { continue }
            let slug = String(title.dropFirst().lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
            let count = seen[slug, default: 0]
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
            seen[slug] = count + 1
        }
        return anchors
    }
}
