import Foundation
import Testing

/// Every way an upstream can fail a sync: the README's exit code, a stderr line naming the source
/// and the reason, and the cached rows exactly as they were before.
@Suite(.gated) struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var kind = "account"
        /// The upstream's fault settings, or nil to stop the upstream (connection refused).
        var control: [String: String]?
        var exitCode: Int32
        var reason: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "connection refused", control: nil, exitCode: 75, reason: "connection refused"),
        Case(name: "HTTP 500", control: ["status": "500"], exitCode: 75, reason: "HTTP 500 from http://127.0.0.1:"),
        Case(name: "HTTP 404", control: ["status": "404"], exitCode: 65, reason: "HTTP 404 from"),
        Case(name: "HTTP 401", control: ["status": "401"], exitCode: 77, reason: "HTTP 401 from"),
        Case(name: "malformed JSON", control: ["fault": "malformed"], exitCode: 65, reason: "not valid JSON"),
        Case(name: "truncated body", control: ["fault": "truncated"], exitCode: 75, reason: "truncated body"),
        Case(name: "connection reset mid-body", control: ["fault": "reset"], exitCode: 75, reason: "truncated body"),
        Case(name: "plain-text 200", control: ["fault": "plain"], exitCode: 65, reason: "not JSON (the body starts with \"Sorry"),
        Case(name: "HTML 200", control: ["fault": "html"], exitCode: 65, reason: "not JSON (the body starts with \"<!doctype"),
        Case(name: "wrong field types", control: ["fault": "wrong-types"], exitCode: 65,
             reason: "body.transactions[0].amount: expected a number"),
        Case(name: "envelope status 500 with a message", control: ["fault": "envelope-error", "message": "Ledger offline for maintenance"],
             exitCode: 65, reason: "upstream answered status 500: Ledger offline for maintenance"),
        Case(name: "body null", control: ["fault": "null-body", "message": "No account"], exitCode: 65, reason: "body is null"),
        Case(name: "jokes: wrong field types", kind: "jokes", control: ["fault": "wrong-types"], exitCode: 65,
             reason: "[0].id: expected an integer"),
        Case(name: "jokes: truncated body", kind: "jokes", control: ["fault": "truncated"], exitCode: 75, reason: "truncated body"),
    ]

    @Test(arguments: cases)
    func aFailedSyncKeepsTheCache(_ test: Case) async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        let path = test.kind == "account" ? "/account" : "/jokes/ten"
        try await box.cache("sources", "add", "src", "--kind", test.kind, "--url", upstream.baseURL + path)
        let good = try await box.cache("sync", "src")
        #expect(good.status == 0, "\(good.stderr)")
        let before = try cacheDump(box.database)
        #expect(before.contains("'src'"))

        if let control = test.control {
            try upstream.control(control)
        } else {
            upstream.stop()
        }
        let failed = try await box.cache("sync", "src", "--json")
        #expect(failed.status == test.exitCode, "\(failed.stderr)")
        let errorLine = try #require(failed.stderr.split(separator: "\n").first.map(String.init))
        #expect(errorLine.hasPrefix("cache: sync src: "))
        #expect(errorLine.contains(test.reason), "\(errorLine)")
        let report = try #require(try failed.jsonArray().first)
        #expect(report["outcome"] as? String == "failed")
        #expect((report["error"] as? String)?.contains(test.reason) == true)

        #expect(try cacheDump(box.database) == before)
        // The failure is on record, and the rows are still served.
        let history = try rows(box.database, "SELECT outcome, error FROM sync_runs ORDER BY id")
        #expect(history.map { $0["outcome"] } == ["updated", "failed"])
        let listing = try await box.cache("list", "src", "--json")
        #expect(listing.status == 0)
        #expect(try !listing.jsonArray().isEmpty)
        let status = try #require(try await box.cache("status", "--json").jsonArray().first)
        #expect((status["last_error"] as? String)?.contains(test.reason) == true)
    }

    @Test func unreachableWithNothingCachedIsUnavailable() async throws {
        let box = try Sandbox()
        let upstream = try LoopbackUpstream()
        let url = upstream.baseURL + "/account"
        upstream.stop()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", url)
        let result = try await box.cache("sync")
        #expect(result.status == 69)
        #expect(result.stderr.contains("cache: sync bank: cannot reach"))
    }

    @Test func theFirstFailureSetsTheExitCodeAndOtherSourcesStillSync() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "a-bad", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/random/abc")
        try await box.cache("sources", "add", "b-good", "--kind", "jokes", "--url", upstream.baseURL + "/jokes/ten")
        let result = try await box.cache("sync", "--json")
        #expect(result.status == 65)
        let reports = try result.jsonArray()
        #expect(reports.map { $0["outcome"] as! String } == ["failed", "updated"])
    }

    @Test func controlCharactersFromUpstreamAreEscaped() async throws {
        let upstream = try LoopbackUpstream()
        let box = try Sandbox()
        try await box.cache("sources", "add", "bank", "--kind", "account", "--url", upstream.baseURL + "/account")
        try upstream.control(["fault": "envelope-error", "message": "bad \u{1B}[31mred\u{1B}[0m"])
        let result = try await box.cache("sync")
        #expect(result.status == 65)
        #expect(!result.stderr.contains("\u{1B}"))
        #expect(result.stderr.contains("\\u{1b}[31mred"))
    }
}
