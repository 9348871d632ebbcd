import Foundation
import Testing

/// `cache serve` checked by tools nobody here wrote: httplint reads every route's answer against
/// the HTTP RFCs (syntax, caching, validators; RFC 9111's freshness arithmetic among them), and
/// schemathesis fuzzes every operation `/openapi.json` describes. Both come from PyPI, pinned in
/// `Scripts/test-venv`; without them these are skipped, saying why.
@Suite(.waiting, .enabled(if: TestTools.available(for: "httplint and schemathesis"), "the tests' Python tools are missing (the reason is printed above)"))
struct ServeStandardsTests {
    /// Every route in the table, its parameters filled with a source and a row that exist.
    static func targets(_ served: ServeTests.Served) throws -> (targets: [String], key: String) {
        let routes = try #require(try served.server.get("/").json()["routes"] as? [String])
        let rows = try #require(try served.server.get("/sources/jokes/rows?limit=1").json()["rows"] as? [[String: Any]])
        let key = try #require(rows.first?["key"] as? String)
        let targets = routes.map { route -> String in
            let parts = route.split(separator: " ", maxSplits: 1).map(String.init)
            let path = parts[1].replacingOccurrences(of: "{name}", with: "jokes").replacingOccurrences(of: "{key}", with: key)
            return parts[0] == "GET" ? path : parts[0] + ":" + path
        }
        return (targets, key)
    }

    /// No answer of any route has a note httplint calls BAD, and it reads the rows' headers as
    /// the TTL says: fresh for what is left of it (RFC 9111 §4.2, counting `Age`).
    @Test func httplintFindsNothingBadInAnyRoutesAnswer() async throws {
        let served = try ServeTests.served()
        defer { withExtendedLifetime(served) {} }
        let (targets, _) = try Self.targets(served)
        let python = try TestTools.python.get()
        let run = try await served.box.run(python, [Paths.repository + "/Scripts/http-lint", "--json", "http://127.0.0.1:\(served.server.port)"] + targets
                                           + ["/sources/jokes/rows?limit=2", "/sources/nope", "DELETE:/sources"])
        let answers = try run.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(answers.count == targets.count + 3, "\(run.stderr)")
        for answer in answers {
            let notes = answer["notes"] as? [[String: String]] ?? []
            let bad = notes.filter { $0["level"] == "BAD" }.map { $0["summary"] ?? "" }
            #expect(bad.isEmpty, "\(answer["target"] ?? ""): \(bad)")
        }
        #expect(run.status == 0, "\(run.stdout.suffix(2000)) \(run.stderr)")
        let rows = try #require(answers.first { $0["target"] as? String == "GET /sources/jokes/rows?limit=2" })
        let freshness = (rows["notes"] as? [[String: String]] ?? []).compactMap { $0["summary"] }.filter { $0.contains("fresh") || $0.contains("stale") }
        #expect(freshness.contains { $0.hasPrefix("This response is fresh for 60 minutes") || $0.hasPrefix("This response is fresh for 59 minutes") }, "\(freshness)")
    }

    /// A bounded schemathesis pass from `/openapi.json` (Scripts/api-fuzz): no 5xx, and no
    /// status, media type, header or body outside the description.
    @Test func schemathesisFindsNoAnswerOutsideTheDescription() async throws {
        let served = try ServeTests.served()
        defer { withExtendedLifetime(served) {} }
        let (_, key) = try Self.targets(served)
        let run = try await served.box.run(Paths.repository + "/Scripts/api-fuzz", [
            "http://127.0.0.1:\(served.server.port)", "--name", "jokes", "--key", key, "--examples", "10", "--seed", "20261203",
        ])
        #expect(run.status == 0, "\(run.stdout.suffix(4000)) \(run.stderr.suffix(1000))")
        #expect(run.stdout.contains(" passed"), "\(run.stdout.suffix(1000))")
    }
}
