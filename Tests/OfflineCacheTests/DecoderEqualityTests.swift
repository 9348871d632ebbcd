import Foundation
import Testing
@testable import OfflineCache

/// The byte-level reading must equal Foundation's JSONDecoder reading on the same inputs:
/// the same payload, or the same failure.
@Suite(.computing) struct DecoderEqualityTests {
    func outcome(_ decode: (Data, PayloadShape) throws(UpstreamError) -> Payload, _ body: Data, _ kind: PayloadShape) -> String {
        do { return "ok \(try decode(body, kind))" } catch { return "failed \(error)" }
    }

    func expectEqual(_ body: Data, _ kind: PayloadShape, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(body, shape: kind) }, body, kind)
        let reference = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decodeWithFoundation(body, shape: kind) }, body, kind)
        #expect(fast == reference, "input: \(String(decoding: body.prefix(300), as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(releasing(body, kind) == fast, "input: \(String(decoding: body.prefix(300), as: UTF8.self))", sourceLocation: sourceLocation)
    }

    /// Gives back every proven byte at once, as zeros: whatever reads one again reads it broken.
    static let zeroing = BodyRelease(every: 1) { start, count in start.initializeMemory(as: UInt8.self, repeating: 0, count: count) }

    /// The same decode, the body consumed as a sync consumes it (on a copy of its own, released
    /// as it is read): the same payload, or the same failure, word for word.
    func releasing(_ body: Data, _ kind: PayloadShape, _ release: BodyRelease = Self.zeroing) -> String {
        outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(Data(body), shape: kind, release: release) }, body, kind)
    }

    static let account = #"""
        {"status": 200, "message": "OK", "extra": {"nested": [1, 2.5e3, true, null, "\u00e9\ud83d\ude00"]},
         "body": {"name": "Jane \"J\" Appleseed\n", "currentBalance": 1234.56, "ignored": [],
          "transactions": [{"type": 0, "vendor": "Payroll", "amount": 2000, "date": "2026-11-27 09:00:00"},
                           {"type": 1, "vendor": "Caf\u00e9 \/ Bar", "amount": 7.23, "date": "2026-11-28 08:15:14", "note": null},
                           {"date": "2026-11-29 22:41:09", "amount": -0.05, "vendor": "Uber", "type": 2}]}}
        """#
    static let jokes = #"""
        [{"id": 1, "type": "general", "setup": "What did the fish say?\nWell?", "punchline": "Dam."},
         {"punchline": "P", "setup": "S", "type": "dad", "id": 451, "extra": {"a": [{}]}}]
        """#

    /// Every bad input of the core issue, and then some.
    static let cases: [(String, PayloadShape)] = [
        (account, .account), (jokes, .jokes),
        (#"{"id": 7, "type": "t", "setup": "s", "punchline": "p"}"#, .jokes),
        ("[]", .jokes), ("", .jokes), ("   ", .account), ("Sorry, that's not a number.", .jokes),
        ("<!doctype html><h1>Back soon</h1>", .account),
        (#"{"status": 500, "message": "Ledger offline", "body": null}"#, .account),
        (#"{"status": 500, "message": "down", "body": {"name": 5}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": null}"#, .account),
        (#"{"status": 200, "message": "OK"}"#, .account),
        (#"{"status": 200, "body": null}"#, .account),
        (#"{"status": "200", "body": null}"#, .account),
        (#"{"message": "no status", "body": null}"#, .account),
        (#"{"status": 200, "message": 5, "body": null}"#, .account),
        (#"{"status": 200.0, "message": "OK", "body": null}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": "1", "transactions": []}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"currentBalance": 1, "transactions": []}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": null, "currentBalance": 1, "transactions": []}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": {}}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": "1", "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00"}]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": "7.23", "date": "2026-11-27 09:00:00"}]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "amount": 1, "date": "2026-11-27 09:00:00"}]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "27/11/2026"}]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "bad"}, {"type": "x"}]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [1]}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": []}} trailing"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [],}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 01, "transactions": []}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1e2, "transactions": []}}"#, .account),
        (#"{"status": 200, "message": "OK", "body": {"name": "\ud800", "currentBalance": 1, "transactions": []}}"#, .account),
        (#"[{"id": "1", "type": "g", "setup": "s", "punchline": "p"}]"#, .jokes),
        (#"[{"id": 1, "type": "g", "setup": "s"}]"#, .jokes),
        (#"[{"id": 1e0, "type": "g", "setup": "s", "punchline": "p"}]"#, .jokes),
        (#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p"}, 5]"#, .jokes),
        (#"[1, 2]"#, .account),
        // The envelope's head is judged before its body, wherever the keys stand.
        (#"{"body": {"name": "J", "currentBalance": 1, "transactions": []}, "message": "OK", "status": 200}"#, .account),
        (#"{"body": {"name": 5}, "status": 503, "message": "later"}"#, .account),
        (#"{"body": {"name": 5}, "status": "x"}"#, .account),
        (#"{"status": 200, "body": {"name": 5}}"#, .account),
        (#"{"status": 200, "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1}]}, "extra": [}"#, .account),
        (#"{"type": "error", "message": "joke not found"}"#, .jokes),
        (#"[{"id": 1, "type": "g", "setup": "tab\there", "punchline": "p"}]"#, .jokes),
    ]

    @Test func everyCaseReadsTheSame() {
        for (text, kind) in Self.cases { expectEqual(Data(text.utf8), kind) }
    }

    /// A key named twice in one object. Foundation keeps the first value; jq, JavaScript and
    /// Python keep the last, so the cache and the next tool would disagree about the same bytes:
    /// it is bad data (65), the sync changes nothing, and the message names the key (issue 55,
    /// item 5).
    static let repeatedKeys: [(String, PayloadShape)] = [
        (#"{"status": 200, "body": {"name": "J", "currentBalance": 1, "transactions": []}, "body": null}"#, .account),
        (#"{"status": 200, "body": {"name": 5}, "body": {"name": "J", "currentBalance": 1, "transactions": []}}"#, .account),
        (#"{"status": 200, "body": {"name": "J", "currentBalance": 1, "transactions": []}, "status": 500}"#, .account),
        (#"{"status": 200, "status": "x", "body": {"name": "J", "currentBalance": 1, "transactions": []}}"#, .account),
        (#"{"status": 200, "body": {"name": "J", "name": 5, "currentBalance": 1, "transactions": []}}"#, .account),
        (#"{"status": 200, "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00", "type": "x"}]}}"#, .account),
        (#"[{"id": 1, "id": "x", "type": "g", "setup": "s", "punchline": "p"}]"#, .jokes),
        (#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p", "punchline": 5}]"#, .jokes),
    ]

    @Test func aKeyNamedTwiceIsBadDataNamingIt() {
        for (text, kind) in Self.repeatedKeys {
            let body = Data(text.utf8)
            let fast = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(body, shape: kind) }, body, kind)
            #expect(fast.hasPrefix("failed bad data:") && fast.contains("is named twice in one object"), "\(text): \(fast)")
            #expect(releasing(body, kind) == fast, "\(text)")
        }
    }

    @Test func numbersReadExactlyAsFoundationReadsThem() {
        // The fast path for short decimals must give strtod's answer, bit for bit.
        var generator = SplitMix64(seed: 5)
        var tokens = ["0.1", "0.2", "0.30000000000000004", "-0.0", "-0.05", "226.46", "1e22", "1e23", "1.5e-22", "9e-23",
                      "123456789012345.6", "1234567890123456.7", "2.5E+3", "7.23", "0.000000000000000000001", "4.9e-324",
                      "1.7976931348623157e308", "100.10", "999999999999999.9"]
        for _ in 0..<20_000 {
            let digits = String((0..<Int.random(in: 1...17, using: &generator)).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let point = Int.random(in: 0...digits.count, using: &generator)
            var token = String(digits.prefix(point).drop { $0 == "0" }.isEmpty ? "0" : String(digits.prefix(point).drop { $0 == "0" }))
            if point < digits.count { token += "." + digits.dropFirst(point) }
            if Bool.random(using: &generator) { token += "e\(Int.random(in: -25...25, using: &generator))" }
            tokens.append((Bool.random(using: &generator) ? "-" : "") + token)
        }
        var fast = 0
        for token in tokens {
            let bytes = Array(token.utf8)
            guard let value = bytes.withUnsafeBufferPointer({ JSONCursor.exactDouble($0) }) else { continue }
            fast += 1
            let reference = Double(token)!
            #expect(value.bitPattern == reference.bitPattern, "\(token): \(value) against \(reference)")
        }
        #expect(fast > tokens.count / 2)  // the fast path is taken, not only the fallback
        expectEqual(Data(#"{"status": 200, "body": {"name": "J", "currentBalance": -0.0, "transactions": [{"type": 1, "vendor": "V", "amount": 1e23, "date": "2026-11-27 09:00:00"}, {"type": 1, "vendor": "V", "amount": 0.30000000000000004, "date": "2026-11-27 09:00:00"}]}}"#.utf8), .account)
    }

    @Test func nestingIsLimitedAsFoundationLimitsIt() {
        // Foundation takes 512 levels of arrays and objects and refuses 513, as does the byte
        // reader; a body of nothing but brackets fails cleanly instead of exhausting the stack.
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        for depth in [511, 512, 513] {
            expectEqual(Data(nested(depth).utf8), .jokes)
            expectEqual(Data((#"[{"id": 1, "type": "g", "setup": "s", "punchline": "p", "x": "# + nested(depth - 2) + "}]").utf8), .jokes)
            expectEqual(Data((#"{"status": 200, "extra": "# + nested(depth - 1) + #", "body": null}"#).utf8), .account)
            // Inside a transaction, which the quick path reads: envelope, body, array, object.
            expectEqual(Data((#"{"status": 200, "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00", "x": "#
                              + nested(depth - 4) + "}]}}").utf8), .account)
        }
        #expect(throws: UpstreamError.badData("not valid JSON (malformed or cut short)")) {
            try PayloadDecoder.decode(Data(String(repeating: "[", count: 4_000_000).utf8), shape: .jokes)
        }
    }

    @Test func truncatedAndMutatedBodiesReadTheSame() {
        // Every prefix of a real body (a truncated download), and single-byte mutations: those
        // that leave valid JSON must read the same; those that do not must fail in both.
        for (text, kind) in [(Self.account, PayloadShape.account), (Self.jokes, .jokes)] {
            let bytes = Array(text.utf8)
            for cut in 0..<bytes.count { expectEqual(Data(bytes[0..<cut]), kind) }
            // Seeded, so a run is repeatable: CACHE_TEST_SEED picks another sample of mutations.
            var generator = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["CACHE_TEST_SEED"] ?? "") ?? 20261130)
            let alphabet = Array(#"{}[],:"\ 0123456789.eE-+tfnul"#.utf8) + [0x00, 0x1F, 0xC3, 0xFF]
            for _ in 0..<1500 {
                var mutated = bytes
                let at = Int.random(in: 0..<mutated.count, using: &generator)
                mutated[at] = alphabet.randomElement(using: &generator)!
                let context = String(decoding: mutated[max(0, at - 12)..<min(mutated.count, at + 12)], as: UTF8.self).debugDescription
                let data = Data(mutated)
                if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil {
                    // Still JSON: the same payload, or the same failure, word for word.
                    expectEqual(data, kind)
                } else {
                    // Not JSON: both refuse it, a broken escape in a string no field reads included.
                    let fast = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(body, shape: kind) }, data, kind), reference = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decodeWithFoundation(body, shape: kind) }, data, kind)
                    #expect(fast == reference || (fast.hasPrefix("failed") && reference.hasPrefix("failed")),
                            "at \(context): \(fast.prefix(60)) / \(reference.prefix(60))")
                    #expect(releasing(data, kind) == fast, "at \(context)")
                }
            }
        }
    }

    @Test func theRealJokesAndALargeAccountReadTheSame() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/data/official-jokes.json")
        let raw = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [[String: Any]]
        let numbered = raw.enumerated().map { index, joke in joke.merging(["id": index + 1]) { $1 } }
        expectEqual(try JSONSerialization.data(withJSONObject: numbered), .jokes)

        var transactions: [[String: Any]] = []
        // 5,000 transactions (450 KB): 28 releases of 16 KiB below (20,000 took 6 CPU-seconds).
        for i in 0..<5_000 {
            transactions.append(["type": i % 7 == 0 ? 0 : 1, "vendor": ["Starbucks", "Café Noir", "Uber", "Ünïcode"][i % 4],
                                 "amount": Double(i % 5000) / 100 + 0.01, "date": String(format: "2026-%02d-%02d %02d:%02d:%02d", 1 + i % 12, 1 + i % 28, i % 24, i % 60, (i * 7) % 60)])
        }
        let envelope: [String: Any] = ["status": 200, "message": "OK", "body": ["name": "Big", "currentBalance": 99.5, "transactions": transactions]]
        let large = try JSONSerialization.data(withJSONObject: envelope)
        expectEqual(large, .account)

        // Released as a sync releases it (whole pages back to the system, here every 16 KiB), with
        // a fault late in the body: a wrong type, a syntax error, a cut; a key after the
        // transactions whose type error must still win in declaration order.
        let pages = BodyRelease(every: 16 << 10, discard: BodyRelease.pages.discard)
        let text = String(decoding: large, as: UTF8.self)
        let late = try #require(text.range(of: "\"amount\":", options: .backwards, range: text.index(text.endIndex, offsetBy: -2000)..<text.endIndex))
        let faults = [
            text.replacingCharacters(in: late, with: "\"amount\":\"x\",\"was\":"),
            text.replacingCharacters(in: late, with: "\"amount\"::"),
            String(text.prefix(text.utf8.count - 700)),
        ]
        for body in [large] + faults.map({ Data($0.utf8) }) {
            let fast = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(body, shape: kind) }, body, .account)
            #expect(releasing(body, .account, pages) == fast)
            #expect(releasing(body, .account) == fast)
            #expect(fast == outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decodeWithFoundation(body, shape: kind) }, body, .account))
        }
        // A key named again after the released transactions: refused, released or not.
        let repeated = Data(text.replacingOccurrences(of: "\"currentBalance\":99.5", with: "\"currentBalance\":99.5,\"name\":7").utf8)
        let fast = outcome({ body, kind throws(UpstreamError) in try PayloadDecoder.decode(body, shape: kind) }, repeated, .account)
        #expect(fast.contains("\"name\" is named twice in one object"), "\(fast.prefix(200))")
        #expect(releasing(repeated, .account, pages) == fast)
    }
}

/// A small seeded generator (SplitMix64), so the mutation sample is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
