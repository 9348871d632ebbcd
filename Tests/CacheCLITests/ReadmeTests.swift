import Foundation
import Testing
@testable import CacheCLI

/// The README is the contract users rely on: these hold it to the program.
@Suite(.gated) struct ReadmeTests {
    static let readme = Docs.readme
    /// The README and the manual it links to (`docs/`): where a recipe or an example lives.
    static let manual = Docs.manual
    /// The reference the README links to: every command and option, every exit code.
    static let reference: String = (try? String(contentsOfFile: Paths.repository + "/docs/reference.md", encoding: .utf8)) ?? ""

    /// The reference's commands table has a row for every command, naming each of its options;
    /// the README links to it, and the manual names every command.
    @Test func theCommandsTableNamesEveryCommandAndOption() async throws {
        let rows = Self.reference.split(separator: "\n").filter { $0.hasPrefix("| `cache ") }.map(String.init)
        #expect(Self.readme.contains("[docs/reference.md](docs/reference.md#commands)"))
        for spec in CommandTable.commands where !["", "sources"].contains(spec.name) {
            let row = try #require(rows.first { $0.hasPrefix("| `cache \(spec.name) ") || $0.hasPrefix("| `cache \(spec.name)`") },
                                   "no row for 'cache \(spec.name)' in the README's commands table")
            for option in spec.options {
                #expect(row.contains(option.name), "the reference's row for 'cache \(spec.name)' does not name \(option.name)")
            }
            let word = spec.name.split(separator: " ").last.map(String.init) ?? spec.name
            #expect(Self.manual.contains("`\(word)`") || Self.manual.contains("`cache \(spec.name)"), "neither the README nor docs/ names '\(spec.name)'")
        }
    }

    /// `cache status` prints the columns the README lists.
    @Test func theStatusTableHasTheReadmesColumns() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        let documented = try #require(Self.manual.range(of: "`SOURCE KIND").map { start in
            Self.manual[Self.manual.index(after: start.lowerBound)...].prefix { $0 != "`" }
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
        let lines = manual.components(separatedBy: "\n")
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

    /// The front door, "Your own API and a CSV in two minutes", run as written: the loopback
    /// upstream on a free port instead of 8766, the built binary for the `swift build` line
    /// (the suite holds the build folder), the sandbox's database for the one in /tmp.
    @Test func theFrontDoorRunsAsWritten() async throws {
        let start = try #require(Self.readme.range(of: "## Your own API and a CSV in two minutes"))
        let after = Self.readme[start.upperBound...]
        let open = try #require(after.range(of: "```sh\n"))
        let block = String(after[open.upperBound..<(try #require(after[open.upperBound...].range(of: "```"))).lowerBound])
        #expect(block.split(separator: "\n").count <= 15, "the front door is more than 15 lines")
        for step in ["cache sync", "cache list items", "cache list shop", "cache search items", "cache log items"] {
            #expect(block.contains(step), "the front door does not show \(step)")
        }
        // Not on the port `cache serve` takes by default: the next step after the tour is serve.
        #expect(!block.contains("8765"), "the tour's upstream takes cache serve's port")
        let box = try Sandbox()
        let port = try freePort()
        let script = block.split(separator: "\n").filter { !$0.hasPrefix("swift build") }.joined(separator: "\n")
            .replacingOccurrences(of: "8766", with: String(port))
            .replacingOccurrences(of: ".build/debug/cache", with: Paths.cacheBinary)
            .replacingOccurrences(of: "/tmp/cache-tour.sqlite3", with: box.database)
        let ran = try await box.run("/bin/bash", ["-e", "-c", "cd '\(Paths.repository)'\n" + script])
        #expect(ran.status == 0, "\(ran.stdout)\n\(ran.stderr)")
        #expect(ran.stdout.contains("items: updated (300 inserted") && ran.stdout.contains("shop: updated (300 inserted"), "\(ran.stdout)")
        #expect(ran.stdout.contains("item-1 ") && ran.stdout.contains("[user7]") && ran.stdout.contains("loaded"), "\(ran.stdout)")
        // A json boolean reads as the word, in the table as in the CSV table's text.
        let itemRow = ran.stdout.split(separator: "\n").first { $0.contains("item-1 ") && $0.contains("owner") == false && $0.contains("user1") }
        #expect(itemRow.map { $0.contains(" true ") || $0.contains(" false ") } == true, "\(ran.stdout)")
        // After the upstream stopped, the table's rows came from the cache: the last line is one.
        let last = ran.stdout.split(separator: "\n").last ?? ""
        #expect(last.contains("item-10") && last.contains("user10"), "\(ran.stdout)")
    }

    /// A port nothing listens on now (the kernel's pick, let go).
    func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The front door and the manual (issue 54): a README of at most 300 lines, every shell block
/// run by a test or marked as an illustration, and every link in it and in `docs/` resolves, to
/// a file that exists and, with `#anchor`, a heading it has.
@Suite struct DocsLinkTests {
    @Test func theReadmeIsAFrontDoor() {
        let lines = Docs.readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 300, "README.md is \(lines) lines; the manual is docs/")
        for page in Docs.pages.keys where !["docs/performance.md", "docs/reference.md"].contains(page) {
            #expect(Docs.readme.contains("(\(page))"), "the README does not link to \(page)")
        }
    }

    /// Every shell block in the README and docs/ is run by a test as printed, or marked as an
    /// illustration (issue 54): the line before it says which, `<!-- shell: run by Suite.test -->`
    /// naming a test that reads the docs (or `.ci/run`, which runs the README's first block), or
    /// `<!-- shell: an illustration: why -->`. A block added without a word fails here.
    @Test func everyShellBlockIsRunOrMarkedAnIllustration() throws {
        var unmarked: [String] = []
        for file in ["README.md"] + Docs.pages.keys.sorted() {
            let lines = Docs.text(file).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (number, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == "```sh" {
                let before = lines[..<number].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.trimmingCharacters(in: .whitespaces) ?? ""
                let place = "\(file):\(number + 1)"
                guard before.hasPrefix("<!-- shell: "), before.hasSuffix(" -->") else { unmarked.append(place); continue }
                let word = String(before.dropFirst("<!-- shell: ".count).dropLast(" -->".count))
                if word.hasPrefix("an illustration: ") {
                    #expect(word.count > "an illustration: ".count + 10, "\(place): say why it is an illustration")
                } else if word == "run by .ci/run" {
                    let first = lines[number + 1].split(separator: " ").first.map(String.init) ?? ""
                    #expect(try String(contentsOfFile: Paths.repository + "/.ci/run", encoding: .utf8).contains(first), "\(place): .ci/run does not run \(first)")
                } else if word.hasPrefix("run by "), case let parts = word.dropFirst("run by ".count).split(separator: "."), parts.count == 2 {
                    let suite = Docs.text("Tests/CacheCLITests/\(parts[0]).swift")
                    #expect(suite.contains("func \(parts[1])(") && suite.contains("Docs."), "\(place): \(parts[0]).\(parts[1]) is not a test that reads the docs")
                } else {
                    unmarked.append(place + " (\(word))")
                }
            }
        }
        #expect(unmarked.isEmpty, "shell blocks neither run by a test nor marked as illustrations: \(unmarked)")
    }

    @Test func everyLinkResolves() throws {
        var broken: [String] = []
        let files = ["README.md"] + Docs.pages.keys.sorted()
        var anchors: [String: Set<String>] = [:]
        for file in files { anchors[file] = Docs.anchors(of: Docs.text(file)) }
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        for file in files {
            let folder = (file as NSString).deletingLastPathComponent
            for match in Docs.text(file).matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let path = parts[0].isEmpty ? file : ((folder as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
                guard FileManager.default.fileExists(atPath: Paths.repository + "/" + path) else {
                    broken.append("\(file): \(target) (no file \(path))")
                    continue
                }
                if parts.count == 2, path.hasSuffix(".md"), !(anchors[path] ?? Docs.anchors(of: Docs.text(path))).contains(parts[1]) {
                    broken.append("\(file): \(target) (no heading #\(parts[1]) in \(path))")
                }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }
}
