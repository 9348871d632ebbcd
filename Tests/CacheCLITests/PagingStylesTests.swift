import Foundation
import Testing

/// Every common way an API pages, each end to end against the loopback upstream's routes over
/// real HTTP (the command runs in-process): all 300 records in as many requests as the style
/// takes, a page failing mid-way writes nothing, and a page loop is caught.
@Suite(.gated) struct PagingStylesTests {
    struct Style: Sendable, CustomStringConvertible {
        var name: String
        var path: String
        var options: [String]
        /// Requests for 300 records (an offset or page style reads one page past the end, unless
        /// a page shorter than the first ends it).
        var requests: Int
        /// What a server that ignores the paging parameters ends in.
        var loop: String
        var description: String { name }
    }

    static let styles: [Style] = [
        Style(name: "header cursor", path: "/api/header-cursor?per_page=100",
              options: ["--next", "header:X-Next-Cursor", "--next-param", "cursor"], requests: 3, loop: "points back at a page already read"),
        Style(name: "offset, ending on an empty page", path: "/api/offset?limit=100",
              options: ["--next", "offset", "--next-param", "offset"], requests: 4, loop: "more than 5 pages (--max-pages)"),
        Style(name: "offset, ending on a short page", path: "/api/offset?limit=120",
              options: ["--next", "offset", "--next-param", "offset"], requests: 3, loop: "more than 5 pages (--max-pages)"),
        Style(name: "page numbers", path: "/api/pages?size=100",
              options: ["--rows", "$.data", "--next", "page", "--next-param", "page"], requests: 4, loop: "more than 5 pages (--max-pages)"),
        Style(name: "page numbers from 0", path: "/api/pages?size=100&base=0",
              options: ["--rows", "$.data", "--next", "page", "--next-param", "page", "--first-page", "0"], requests: 4,
              loop: "more than 5 pages (--max-pages)"),
        Style(name: "last key (Stripe)", path: "/api/stripe?limit=100",
              options: ["--rows", "$.data", "--next", "last-key", "--next-param", "starting_after", "--has-more", "$.has_more"],
              requests: 3, loop: "points back at a page already read"),
        Style(name: "OData next link", path: "/api/odata?per_page=100",
              options: ["--rows", "$.value", "--next", "$['@odata.nextLink']"], requests: 3, loop: "points back at a page already read"),
    ]

    func records(_ box: Sandbox) throws -> [[String: String]] {
        try rows(box.database, "SELECT key, record, seen_at FROM records ORDER BY key")
    }

    @Test(arguments: styles)
    func everyRecordInAsManyRequestsAsTheStyleTakes(_ style: Style) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let path = String(style.path.prefix { $0 != "?" })
        let add = box.cacheInProcess(["sources", "add", "api", "--kind", "json", "--url", upstream.baseURL + style.path, "--key", "id"] + style.options)
        #expect(add.status == 0, "\(add.stderr)")
        let sync = box.cacheInProcess(["sync", "api", "--json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sync.jsonArray().first?["inserted"] as? Int == 300, "\(sync.stdout)")
        #expect(try upstreamRequests(upstream, path).count == style.requests)
        #expect(try rows(box.database, "SELECT count(DISTINCT key) AS n FROM records").first?["n"] == "300")

        // A page failing mid-way: the sync fails and the cache is as it was.
        let before = try records(box)
        try upstream.setItems(count: 250)
        try upstream.control(["fail_page": 2])
        let failed = box.cacheInProcess(["sync", "api", "--timeout", "5s"])
        #expect(failed.status == 75, "\(failed.stderr)")
        #expect(try records(box) == before)
    }

    @Test(arguments: styles)
    func aServerThatIgnoresThePagingIsCaught(_ style: Style) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let add = box.cacheInProcess(["sources", "add", "api", "--kind", "json", "--url", upstream.baseURL + style.path, "--key", "id",
                                      "--max-pages", "5"] + style.options)
        #expect(add.status == 0, "\(add.stderr)")
        try upstream.control(["ignore_paging": true])
        let sync = box.cacheInProcess(["sync", "api"])
        #expect(sync.status == 65 && sync.stderr.contains(style.loop), "\(sync.stderr)")
        #expect(try records(box).isEmpty)
    }

    /// A has_more that is not a boolean is bad data, not the end of the pages: `1` or `"yes"`
    /// ending them quietly would cache part of the records and remove the rest.
    @Test(arguments: [1, "yes", "true"] as [any Sendable])
    func aHasMoreThatIsNotABooleanIsBadData(_ value: any Sendable) throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let style = try #require(Self.styles.first { $0.path.hasPrefix("/api/stripe") })
        #expect(box.cacheInProcess(["sources", "add", "api", "--kind", "json", "--url", upstream.baseURL + style.path, "--key", "id"]
                                   + style.options).status == 0)
        try upstream.control(["has_more_value": value])
        let sync = box.cacheInProcess(["sync", "api"])
        #expect(sync.status == 65 && sync.stderr.contains("the value at $.has_more is not a boolean"), "\(sync.stderr)")
        #expect(try records(box).isEmpty)
    }

    /// Options that do not go together are refused at add and at set, naming what is missing.
    @Test(arguments: [
        (["--next", "offset"], "'--next offset' needs '--next-param <name>': the query parameter it sets."),
        (["--next", "header:X-Next", "--next-param", "c", "--first-page", "0"], "'--first-page' is for '--next page'."),
        (["--next", "last-key", "--next-param", "after"], "'--next last-key' needs '--has-more <path>': the boolean that says more pages follow."),
        (["--next", "page", "--next-param", "p", "--has-more", "$.more"], "'--has-more' is for '--next last-key'."),
        (["--next", "link", "--next-param", "c"], "'--next-param' needs '--next <style>' other than link: a path, header:NAME, offset, page or last-key."),
        (["--next", "header:Bad Name", "--next-param", "c"], "Invalid value 'header:Bad Name' for '--next': expected link, offset, page, last-key, header:NAME, or a path such as $.next."),
        (["--next", "next"], "Invalid value 'next' for '--next': expected link, offset, page, last-key, header:NAME, or a path such as $.next."),
        (["--rows", "$['unclosed"], "Invalid value '$['unclosed' for '--rows': expected a path such as $, $.results or $.data.items."),
    ] as [([String], String)])
    func optionsThatDoNotGoTogetherAreRefused(_ options: [String], _ message: String) throws {
        let box = try Sandbox()
        let add = box.cacheInProcess(["sources", "add", "api", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id"] + options)
        #expect(add.status == 64 && add.stderr.hasPrefix("cache: " + message.prefix(1).lowercased() + message.dropFirst()), "\(add.stderr)")
    }

    /// `sources set` checks the layout it leaves: switching style drops the options of the old one.
    @Test func setSwitchesStylesAndChecksWhatItLeaves() throws {
        let box = try Sandbox()
        #expect(box.cacheInProcess(["sources", "add", "api", "--kind", "json", "--url", "http://127.0.0.1:9/", "--key", "id",
                                    "--next", "page", "--next-param", "page", "--first-page", "0"]).status == 0)
        let refused = box.cacheInProcess(["sources", "set", "api", "--next", "last-key"])
        #expect(refused.status == 64 && refused.stderr.contains("'--next last-key' needs '--has-more <path>'"), "\(refused.stderr)")
        let set = box.cacheInProcess(["sources", "set", "api", "--next", "last-key", "--next-param", "starting_after", "--has-more", "$.has_more"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stderr.contains("next page → last-key") && set.stderr.contains("first-page 0 → -"), "\(set.stderr)")
        let listed = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(listed["next"] as? String == "last-key" && listed["has_more"] as? String == "$.has_more" && listed["first_page"] is NSNull)
        // To a body URL: the old style's parameter means nothing there and goes with it.
        #expect(box.cacheInProcess(["sources", "set", "api", "--next", "$.links.next"]).status == 0)
        let body = try #require(try box.cacheInProcess(["sources", "list", "--json"]).jsonArray().first)
        #expect(body["next"] as? String == "$.links.next" && body["next_param"] is NSNull && body["has_more"] is NSNull, "\(body)")
    }

    /// The README's command lines, split as a shell splits them: quotes, and `\` at a line's end.
    static func shellWords(_ text: String) -> [String] {
        var words: [String] = [], word = "", quote: Character?, inWord = false
        var characters = Array(text.replacingOccurrences(of: "\\\n", with: " "))[...]
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " || character == "\n" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// The README's recipe for each paging style, run as written but for the URL's host and path.
    @Test func theReadmesRecipesRunAsWritten() async throws {
        let readme = Docs.manual
        let routes = ["/events": "/api/header-cursor", "/products": "/api/offset", "/orders": "/api/pages",
                      "/v1/customers": "/api/stripe", "/odata/Trips": "/api/odata"]
        let commands = readme.components(separatedBy: "\ncache sources add ").dropFirst()
            .map { "sources add " + $0.prefix { $0 != "#" && $0 != "`" } }
            .filter { $0.contains("https://api.example.com/") }
        #expect(commands.count == routes.count, "\(commands)")
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        for command in commands {
            var words = Self.shellWords(command)
            let at = try #require(words.firstIndex(of: "--url")) + 1
            let url = try #require(URLComponents(string: words[at]))
            let route = try #require(routes[url.path], "no route for \(url.path)")
            // The loopback route numbers pages from 1 unless told otherwise.
            let query = (url.query.map { "?" + $0 } ?? "") + (words.contains("--first-page") ? "&base=0" : "")
            words[at] = upstream.baseURL + route + query
            let added = box.cacheInProcess(words)
            #expect(added.status == 0, "\(words): \(added.stderr)")
            let name = words[2]
            let sync = box.cacheInProcess(["sync", name, "--json"], environment: ["STRIPE_KEY": "sk_test_1"])
            #expect(try sync.jsonArray().first?["inserted"] as? Int == 300, "\(name): \(sync.stdout) \(sync.stderr)")
        }
    }
}
