import Foundation
import Testing

/// The loopback upstream's writable collection (`/api/tasks` in `Scripts/upstream.py`), which
/// local edits are pushed to: held here to the texts it stands in for, so a push tested
/// against it is tested against what real APIs do. Over real HTTP on loopback.
@Suite(.gated) struct WritableUpstreamTests {
    static func write(_ upstream: LoopbackUpstream, _ method: String, _ target: String, _ body: String? = nil,
                      headers: [String: String] = [:]) throws -> HTTPReply {
        try HTTPProbe.request(port: upstream.port, method: method, target: target,
                              headers: ["Content-Type": "application/json"].merging(headers) { $1 }, body: body)
    }

    static func applied(_ upstream: LoopbackUpstream) throws -> [[String: Any]] {
        try upstream.taskLog()["applied"] as? [[String: Any]] ?? []
    }

    /// RFC 9110 §8.8.3: a strong validator per task, changed by every write; §13.1.1: a write
    /// whose `If-Match` does not name the current version — or names a task that is gone — is
    /// 412, and changes nothing. RFC 7396: a merge patch's `null` removes a member.
    @Test func preconditionsAndMergePatchesAreTheRFCs() throws {
        let upstream = try LoopbackUpstream()
        try upstream.tasks(["tasks": [["id": 1, "title": "buy milk", "done": false, "note": "2%"]]])
        let read = try Self.write(upstream, "GET", "/api/tasks/1")
        #expect(read.status == 200 && read.headers["etag"] == "\"v1\"", "\(read.headers)")
        #expect(try Self.write(upstream, "GET", "/api/tasks/1", headers: ["If-None-Match": "\"v1\""]).status == 304)

        let patched = try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": true, "note": null}"#, headers: ["If-Match": "\"v1\""])
        #expect(patched.status == 200 && patched.headers["etag"] == "\"v2\"", "\(patched.status) \(patched.text)")
        #expect(try patched.json() as NSDictionary == ["id": 1, "title": "buy milk", "done": true] as NSDictionary)
        let stale = try Self.write(upstream, "PUT", "/api/tasks/1", #"{"title": "other"}"#, headers: ["If-Match": "\"v1\""])
        #expect(stale.status == 412, "\(stale.status) \(stale.text)")
        #expect(try Self.write(upstream, "GET", "/api/tasks/1").json()["title"] as? String == "buy milk")
        #expect(try Self.write(upstream, "DELETE", "/api/tasks/1", headers: ["If-Match": "*"]).status == 204)
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": false}"#, headers: ["If-Match": "\"v2\""]).status == 412)
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": false}"#).status == 404)
    }

    /// A created task is numbered by the server (201, `Location`, `ETag`); a task that breaks the
    /// collection's rules is 422 with a reason, and nothing is stored.
    @Test func createdTasksAreNumberedAndBadOnesRefused() throws {
        let upstream = try LoopbackUpstream()
        try upstream.tasks(["tasks": [["id": 7, "title": "seven"]]])
        let created = try Self.write(upstream, "POST", "/api/tasks", #"{"title": "new"}"#)
        #expect(created.status == 201 && created.headers["location"] == "/api/tasks/8" && created.headers["etag"] == "\"v1\"", "\(created.headers)")
        #expect(try created.json()["id"] as? Int == 8)
        for (body, status) in [(#"{"title": ""}"#, 422), (#"{"done": "yes"}"#, 422), (#"[1]"#, 422), (#"{"title": "#, 400)] {
            let refused = try Self.write(upstream, "POST", "/api/tasks", body)
            #expect(refused.status == status && (try? refused.json()["error"]) != nil, "\(body): \(refused.status) \(refused.text)")
        }
        #expect(try Self.write(upstream, "PUT", "/api/tasks/7", #"{"id": 9, "title": "x"}"#).status == 422, "an id cannot change")
        #expect((try upstream.taskLog()["tasks"] as? [Any])?.count == 2)
    }

    /// draft-ietf-httpapi-idempotency-key-header-06: the key is a quoted string (§2.1); a retry
    /// with the same key and request gets the first answer and is applied once (§2.6); the same
    /// key with another body is 422, while the first is still in flight 409 (§2.7). A write
    /// applied and then cut off before its answer — the case the key is for — applies once when
    /// it is sent again.
    @Test func anIdempotencyKeyAppliesAWriteOnce() async throws {
        let upstream = try LoopbackUpstream()
        try upstream.tasks(["tasks": [["id": 1, "title": "a", "done": false]]])
        let key = ["Idempotency-Key": "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""]
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": true}"#, headers: ["Idempotency-Key": "8e03978e"]).status == 400)

        try upstream.tasks(["apply_then_drop": 1])
        #expect(throws: (any Error).self, "the first answer is lost") { try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": true}"#, headers: key) }
        let retried = try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": true}"#, headers: key)
        #expect(retried.status == 200 && retried.headers["etag"] == "\"v2\"", "\(retried.status) \(retried.text)")
        #expect(try Self.applied(upstream).count == 1, "applied twice")
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"done": false}"#, headers: key).status == 422)

        // A second write held in flight until the test lets it go: the same key meanwhile is
        // 409, and the held one then applies.
        try upstream.tasks(["hold": true])
        let other = ["Idempotency-Key": "\"second\""]
        let port = upstream.port
        // Its answer waits for the test's release, not a clock: a loaded machine may take a
        // while to get there, and a 10 s read bound cut it off once (beside a CPU hog).
        let held = Task.detached {
            try HTTPProbe.request(port: port, method: "PATCH", target: "/api/tasks/1",
                                  headers: ["Content-Type": "application/json", "Idempotency-Key": "\"second\""], body: #"{"title": "b"}"#,
                                  timeout: 120).status
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while try ((upstream.taskLog()["writes"] as? [[String: Any]]) ?? []).filter({ $0["idempotency_key"] as? String == "\"second\"" }).isEmpty,
              ContinuousClock.now < deadline { try await pause(0.02) }
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"title": "b"}"#, headers: other).status == 409)
        try upstream.tasks(["release": true])
        #expect(try await held.value == 200)
        #expect(try Self.applied(upstream).count == 2)
    }

    /// Faults at will: 5xx and 429 with `Retry-After`, answered and not applied.
    @Test func faultsAreAnsweredAndNotApplied() throws {
        let upstream = try LoopbackUpstream()
        try upstream.tasks(["tasks": [["id": 1, "title": "a"]], "status": 429, "retry_after": "2", "times": 2])
        for _ in 0..<2 {
            let limited = try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"title": "b"}"#)
            #expect(limited.status == 429 && limited.headers["retry-after"] == "2")
        }
        #expect(try Self.write(upstream, "PATCH", "/api/tasks/1", #"{"title": "b"}"#).status == 200)
        #expect(try Self.applied(upstream).count == 1)
    }
}
