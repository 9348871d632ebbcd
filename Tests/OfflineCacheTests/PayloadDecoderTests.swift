import Foundation
import Testing
@testable import OfflineCache

@Suite(.computing) struct PayloadDecoderTests {
    func decode(_ json: String, _ kind: PayloadShape) throws(UpstreamError) -> Payload {
        try PayloadDecoder.decode(Data(json.utf8), shape: kind)
    }

    @Test func anAccountEnvelopeDecodes() throws {
        let payload = try decode("""
            {"status": 200, "message": "OK", "extra": 1, "body": {"name": "Jane", "currentBalance": 10,
             "transactions": [{"type": 0, "vendor": "Payroll", "amount": 2000, "date": "2026-11-27 09:00:00", "note": "x"},
                              {"type": 1, "vendor": "Café", "amount": 4.5, "date": "2026-11-28 08:15:14"}]}}
            """, .account)
        #expect(payload == .account(UpstreamAccount(name: "Jane", balance: 10, transactions: [
            UpstreamTransaction(type: 0, vendor: "Payroll", amount: 2000, date: "2026-11-27T09:00:00Z"),
            UpstreamTransaction(type: 1, vendor: "Café", amount: 4.5, date: "2026-11-28T08:15:14Z"),
        ])))
    }

    @Test func jokesDecodeAsAnArrayOrOneObject() throws {
        let one = #"{"id": 3, "type": "general", "setup": "S", "punchline": "P"}"#
        #expect(try decode(one, .jokes) == .jokes([UpstreamJoke(id: 3, type: "general", setup: "S", punchline: "P")]))
        #expect(try decode("[\(one), \(one)]", .jokes).rowCount == 2)
        #expect(try decode("[]", .jokes) == .jokes([]))
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var body: String
        var kind: PayloadShape
        var expected: UpstreamError
        var testDescription: String { "\(expected)" }
    }

    static let badCases: [BadCase] = [
        BadCase(body: "", kind: .jokes, expected: .badData("empty body")),
        BadCase(body: "Sorry, that's not a number.", kind: .jokes, expected: .badData("not JSON (the body starts with \"Sorry, that's not a numb…\")")),
        BadCase(body: "[{\"id\": 1, \"type\": \"g\"", kind: .jokes, expected: .badData("not valid JSON (malformed or cut short)")),
        BadCase(body: #"[{"id": "1", "type": "g", "setup": "s", "punchline": "p"}]"#, kind: .jokes, expected: .badData("[0].id: expected an integer")),
        BadCase(body: #"[{"id": 1, "type": "g", "setup": "s"}]"#, kind: .jokes, expected: .badData("missing field [0].punchline")),
        BadCase(body: #"{"status": 500, "message": "down", "body": null}"#, kind: .account, expected: .envelope(status: 500, message: "down")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": null}"#, kind: .account, expected: .envelope(status: 200, message: "OK (body is null)")),
        BadCase(body: #"{"status": "200", "body": null}"#, kind: .account, expected: .badData("status: expected an integer")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": "1", "transactions": []}}"#,
                kind: .account, expected: .badData("body.currentBalance: expected a number")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1.5, "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00"}]}}"#,
                kind: .account, expected: .badData("body.transactions[0].type: found 1.5, which the field's type cannot hold (a fraction into a whole number, say, or past its range)")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": "debit", "vendor": "V", "amount": 1, "date": "2026-11-27 09:00:00"}]}}"#,
                kind: .account, expected: .badData("body.transactions[0].type: expected an integer")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": "V", "amount": 1, "date": "27/11/2026"}]}}"#,
                kind: .account, expected: .badData("body.transactions[0].date: expected yyyy-MM-dd HH:mm:ss, got \"27/11/2026\"")),
        BadCase(body: #"{"status": 200, "message": "OK", "body": {"name": "J", "currentBalance": 1, "transactions": [{"type": 1, "vendor": null, "amount": 1, "date": "2026-11-27 09:00:00"}]}}"#,
                kind: .account, expected: .badData("body.transactions[0].vendor: expected a string, got null")),
        BadCase(body: #"[1, 2]"#, kind: .account, expected: .badData("the top level: expected an object")),
    ]

    @Test(arguments: badCases)
    func badBodiesFailWithTheirReason(_ test: BadCase) {
        #expect(throws: test.expected) { try decode(test.body, test.kind) }
    }

    @Test func upstreamDatesMustBeRealDates() {
        #expect(PayloadDecoder.isoDate(fromUpstream: "2026-11-30 23:59:59") == "2026-11-30T23:59:59Z")
        #expect(PayloadDecoder.isoDate(fromUpstream: "2026-13-01 00:00:00") == nil)
        #expect(PayloadDecoder.isoDate(fromUpstream: "2026-11-30T23:59:59") == nil)
        #expect(PayloadDecoder.isoDate(fromUpstream: "2026-11-30 24:00:00") == nil)
    }
}
