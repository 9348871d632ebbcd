import Foundation

extension PayloadDecoder {
    /// Decodes a body by reading its bytes in place (see `JSONCursor`): one pass checks the
    /// whole document's syntax, a second decodes the fields. It gives the same payload, or the
    /// same failure, as `decodeWithFoundation`: fields are checked in the order the Decodable
    /// types declare them, and a syntax error anywhere outranks a type error.
    public static func decode(_ body: Data, kind: SourceKind) throws(UpstreamError) -> Payload {
        let first = try precheck(body)
        let result: Result<Payload, UpstreamError> = body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var syntax = JSONCursor(bytes)
            do {
                try syntax.skipValue()
                try syntax.expectEnd()
                var cursor = JSONCursor(bytes)
                switch kind {
                case .account: return .success(.account(try validated(try readAccountEnvelope(&cursor))))
                case .jokes: return .success(.jokes(try readJokes(&cursor, startsWith: first)))
                }
            } catch let failure as JSONCursor.Failure {
                return .failure(.badData(failure.message))
            } catch let error as UpstreamError {
                return .failure(error)
            } catch {
                return .failure(.badData("\(error)"))
            }
        }
        return try result.get()
    }

    /// One field's outcome while its object is read; judged afterwards, in declaration order.
    private enum Field<Value> {
        case missing
        case value(Value)
        case failed(JSONCursor.Failure)

        func get(_ cursor: JSONCursor, _ key: String) throws(JSONCursor.Failure) -> Value {
            switch self {
            case .value(let value): return value
            case .failed(let failure): throw failure
            case .missing:
                let parent = cursor.pathText
                throw JSONCursor.Failure(message: "missing field \(parent == "the top level" ? "" : parent + ".")\(key)")
            }
        }
    }

    /// Reads one field's value; a type error is kept for later (fields are judged in declaration
    /// order) and the cursor moves past the value, whatever depth the error came from.
    private static func capture<Value>(_ cursor: inout JSONCursor,
                                       _ read: (inout JSONCursor) throws(JSONCursor.Failure) -> Value) -> Field<Value> {
        let start = cursor.position, depth = cursor.path.count
        do {
            return .value(try read(&cursor))
        } catch {
            cursor.position = start
            cursor.path.removeLast(cursor.path.count - depth)
            try? cursor.skipValue()  // the syntax pass already proved the value well formed
            return .failed(error)
        }
    }

    private static func readAccountEnvelope(_ cursor: inout JSONCursor) throws -> UpstreamAccount {
        guard cursor.peek() == UInt8(ascii: "{") else { throw try cursor.mismatch("an object") }
        var status = Field<Int>.missing
        var message = Field<String?>.value(nil)
        var bodyStart: Int?
        try cursor.readObject { c, key throws(JSONCursor.Failure) in
            switch key {
            case "status": status = capture(&c) { c throws(JSONCursor.Failure) in try c.readInt() }
            case "message": message = capture(&c) { c throws(JSONCursor.Failure) in try c.readNull() ? nil : try c.readString() }
            case "body":
                c.skipWhitespace()
                let start = c.position
                bodyStart = try c.readNull() ? nil : start
                if bodyStart != nil { try c.skipValue() }
            default: try c.skipValue()
            }
        }
        let code = try status.get(cursor, "status")
        let text = try message.get(cursor, "message")
        guard code == 200 else { throw UpstreamError.envelope(status: code, message: text ?? "(no message)") }
        guard let bodyStart else {
            throw UpstreamError.envelope(status: code, message: text.map { "\($0) (body is null)" } ?? "body is null")
        }
        cursor.position = bodyStart
        cursor.path = [.key("body")]
        return try readAccountBody(&cursor)
    }

    private static func readAccountBody(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> UpstreamAccount {
        guard cursor.peek() == UInt8(ascii: "{") else { throw try cursor.mismatch("an object") }
        var name = Field<String>.missing
        var balance = Field<Double>.missing
        var transactions = Field<[UpstreamTransaction]>.missing
        try cursor.readObject { c, key throws(JSONCursor.Failure) in
            switch key {
            case "name": name = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
            case "currentBalance": balance = capture(&c) { c throws(JSONCursor.Failure) in try c.readDouble() }
            case "transactions": transactions = capture(&c) { c throws(JSONCursor.Failure) in try readTransactions(&c) }
            default: try c.skipValue()
            }
        }
        return UpstreamAccount(name: try name.get(cursor, "name"), balance: try balance.get(cursor, "currentBalance"),
                               transactions: try transactions.get(cursor, "transactions"))
    }

    private static func readTransactions(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> [UpstreamTransaction] {
        guard cursor.peek() == UInt8(ascii: "[") else { throw try cursor.mismatch("an array") }
        var items: [UpstreamTransaction] = []
        try cursor.readArray { c, _ throws(JSONCursor.Failure) in
            guard c.peek() == UInt8(ascii: "{") else { throw try c.mismatch("an object") }
            var type = Field<Int>.missing, vendor = Field<String>.missing
            var amount = Field<Double>.missing, date = Field<String>.missing
            try c.readObject { c, key throws(JSONCursor.Failure) in
                switch key {
                case "type": type = capture(&c) { c throws(JSONCursor.Failure) in try c.readInt() }
                case "vendor": vendor = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                case "amount": amount = capture(&c) { c throws(JSONCursor.Failure) in try c.readDouble() }
                case "date": date = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                default: try c.skipValue()
                }
            }
            items.append(UpstreamTransaction(type: try type.get(c, "type"), vendor: try vendor.get(c, "vendor"),
                                             amount: try amount.get(c, "amount"), date: try date.get(c, "date")))
        }
        return items
    }

    private static func readJokes(_ cursor: inout JSONCursor, startsWith first: UInt8) throws(JSONCursor.Failure) -> [UpstreamJoke] {
        func readJoke(_ c: inout JSONCursor) throws(JSONCursor.Failure) -> UpstreamJoke {
            guard c.peek() == UInt8(ascii: "{") else { throw try c.mismatch("an object") }
            var id = Field<Int>.missing, type = Field<String>.missing
            var setup = Field<String>.missing, punchline = Field<String>.missing
            try c.readObject { c, key throws(JSONCursor.Failure) in
                switch key {
                case "id": id = capture(&c) { c throws(JSONCursor.Failure) in try c.readInt() }
                case "type": type = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                case "setup": setup = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                case "punchline": punchline = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                default: try c.skipValue()
                }
            }
            return UpstreamJoke(id: try id.get(c, "id"), type: try type.get(c, "type"),
                                setup: try setup.get(c, "setup"), punchline: try punchline.get(c, "punchline"))
        }
        guard first == UInt8(ascii: "[") else { return [try readJoke(&cursor)] }
        var jokes: [UpstreamJoke] = []
        try cursor.readArray { c, _ throws(JSONCursor.Failure) in jokes.append(try readJoke(&c)) }
        return jokes
    }
}
