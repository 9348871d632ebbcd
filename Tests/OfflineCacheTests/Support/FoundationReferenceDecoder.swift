import Foundation
@testable import OfflineCache

/// The reference the fast decoder is held to: the same bodies read by Foundation's JSONDecoder,
/// with its errors in the same words. Only the tests use it, so it lives with them.
extension PayloadDecoder {
    static func decodeWithFoundation(_ body: Data, shape: PayloadShape) throws(UpstreamError) -> Payload {
        let first = try precheck(body)
        // Foundation takes a trailing comma in an object; the grammar (and the byte reader) does not.
        guard isJSON(body) else { throw .badData("not valid JSON (malformed or cut short)") }
        switch shape {
        case .account: return .account(try decodeAccount(body))
        case .jokes: return .jokes(try decodeJokes(body, startsWith: first))
        }
    }

    // MARK: Account

    struct EnvelopeHead: Decodable {
        let status: Int
        let message: String?
    }

    struct Envelope: Decodable {
        let body: AccountBody?
    }

    struct AccountBody: Decodable {
        let name: String
        let currentBalance: Double
        let transactions: [Transaction]
    }

    struct Transaction: Decodable {
        let type: Int
        let vendor: String
        let amount: Double
        let date: String
    }

    static func decodeAccount(_ body: Data) throws(UpstreamError) -> UpstreamAccount {
        let head = try run(body) { try JSONDecoder().decode(EnvelopeHead.self, from: $0) }
        guard head.status == 200 else {
            throw .envelope(status: head.status, message: head.message ?? "(no message)")
        }
        let envelope = try run(body) { try JSONDecoder().decode(Envelope.self, from: $0) }
        guard let account = envelope.body else {
            throw .envelope(status: head.status, message: head.message.map { "\($0) (body is null)" } ?? "body is null")
        }
        // Dates are judged after the whole body decoded: a type error anywhere outranks them.
        var transactions: [UpstreamTransaction] = []
        transactions.reserveCapacity(account.transactions.count)
        for (index, item) in account.transactions.enumerated() {
            guard let date = TransactionDate(upstream: item.date) else { throw badDate(at: index, item.date) }
            transactions.append(UpstreamTransaction(type: item.type, vendor: item.vendor, amount: item.amount, date: date))
        }
        return UpstreamAccount(name: account.name, balance: account.currentBalance, transactions: transactions)
    }

    // MARK: Jokes

    struct Joke: Decodable {
        let id: Int
        let type: String
        let setup: String
        let punchline: String
    }

    static func decodeJokes(_ body: Data, startsWith first: UInt8) throws(UpstreamError) -> [UpstreamJoke] {
        let jokes: [Joke] = first == UInt8(ascii: "[")
            ? try run(body) { try JSONDecoder().decode([Joke].self, from: $0) }
            : [try run(body) { try JSONDecoder().decode(Joke.self, from: $0) }]
        return jokes.map { UpstreamJoke(id: $0.id, type: $0.type, setup: $0.setup, punchline: $0.punchline) }
    }

    // MARK: Errors

    /// Runs a JSONDecoder call and turns its error into a sentence naming the field.
    static func run<T>(_ data: Data, _ decode: (Data) throws -> T) throws(UpstreamError) -> T {
        do { return try decode(data) } catch let error as DecodingError {
            // Foundation on Linux reports an integer field holding 1.5 or 1e30 as invalid JSON,
            // with no path; tell that apart from a body that really is not JSON, and find the
            // field as an app's typed rows do (the body decoded again, each number made 0).
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               isJSON(data) {
                throw .badData(DecodingReason.of(error, json: String(decoding: data, as: UTF8.self)) { changed in
                    do { _ = try decode(Data(changed.utf8)); return nil } catch { return error }
                })
            }
            throw .badData(describe(error))
        } catch {
            throw .badData("\(error)")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            var text = ""
            for key in context.codingPath {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case let .typeMismatch(type, context):
            return "\(path(context)): expected \(typeName(type))"
        case let .valueNotFound(type, context):
            return "\(path(context)): expected \(typeName(type)), got null"
        case let .keyNotFound(key, context):
            let parent = path(context)
            return "missing field \(parent == "the top level" ? "" : parent + ".")\(key.stringValue)"
        case let .dataCorrupted(context):
            return context.codingPath.isEmpty ? "not valid JSON (malformed or cut short)" : "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is String.Type: "a string"
        case is Array<Any>.Type: "an array"
        default: "\(type)".hasPrefix("Array") ? "an array" : "an object"
        }
    }

    /// Whether `data` is one JSON value (a bare number included) by RFC 8259's grammar: numbers
    /// as it spells them (no `01`), no lone surrogate escapes, no trailing comma. (JSONDecoder
    /// cannot say: it parses lazily, reports a fraction in an integer field in the same words as
    /// bad syntax, and takes a trailing comma in an object.)
    static func isJSON(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var syntax = StrictJSON(bytes: raw.bindMemory(to: UInt8.self))
            guard syntax.value() else { return false }
            syntax.skipSpace()
            return syntax.position == syntax.bytes.count
        }
    }
}

/// A JSON syntax check by RFC 8259's grammar, for `PayloadDecoder.isJSON`.
struct StrictJSON {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    mutating func eat(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        position += 1
        return true
    }

    mutating func value() -> Bool {
        skipSpace()
        switch current {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), keyed: true)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), keyed: false)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        default: return number()
        }
    }

    mutating func container(close: UInt8, keyed: Bool) -> Bool {
        position += 1
        depth += 1
        defer { depth -= 1 }
        guard depth <= 512 else { return false }
        skipSpace()
        if eat(close) { return true }
        while true {
            if keyed {
                skipSpace()
                guard string() else { return false }
                skipSpace()
                guard eat(UInt8(ascii: ":")) else { return false }
            }
            guard value() else { return false }
            skipSpace()
            if eat(close) { return true }
            guard eat(UInt8(ascii: ",")) else { return false }
        }
    }

    mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != text.utf8Start[index] { return false }
        position += count
        return true
    }

    mutating func digits() -> Int {
        let start = position
        while let byte = current, (0x30...0x39).contains(byte) { position += 1 }
        return position - start
    }

    mutating func number() -> Bool {
        _ = eat(UInt8(ascii: "-"))
        if eat(UInt8(ascii: "0")) {
            if let byte = current, (0x30...0x39).contains(byte) { return false }
        } else if digits() == 0 {
            return false
        }
        if eat(UInt8(ascii: ".")), digits() == 0 { return false }
        if eat(UInt8(ascii: "e")) || eat(UInt8(ascii: "E")) {
            if !eat(UInt8(ascii: "+")) { _ = eat(UInt8(ascii: "-")) }
            if digits() == 0 { return false }
        }
        return true
    }

    mutating func hex4() -> UInt32? {
        guard position + 4 <= bytes.count,
              let value = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else { return nil }
        position += 4
        return value
    }

    mutating func string() -> Bool {
        guard eat(UInt8(ascii: "\"")) else { return false }
        let start = position
        while let byte = current {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: bytes[start..<position - 1], as: UTF8.self) != nil
            case UInt8(ascii: "\\"):
                guard let escape = current else { return false }
                position += 1
                switch escape {
                case UInt8(ascii: "u"):
                    guard let unit = hex4() else { return false }
                    if (0xDC00...0xDFFF).contains(unit) { return false }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard eat(UInt8(ascii: "\\")), eat(UInt8(ascii: "u")), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                    }
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                default:
                    return false
                }
            case 0x00..<0x20:
                return false
            default:
                continue
            }
        }
        return false
    }
}
