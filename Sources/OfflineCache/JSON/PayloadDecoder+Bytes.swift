import FoundationEssentials

extension PayloadDecoder {
    /// Decodes a body by reading its bytes in place (see `JSONCursor`). It gives the same
    /// payload, or the same failure, as `decodeWithFoundation`: fields are checked in the order
    /// the Decodable types declare them, and a syntax error anywhere outranks a type error. One
    /// difference: an object naming a key twice is bad data here, where Foundation keeps the
    /// first value (jq, JavaScript and Python would keep the last).
    ///
    /// One pass decodes. Every byte it accepts it checks at least as strictly as a syntax check
    /// would, so a body it reads whole is valid JSON; only when it fails does a second pass look
    /// for a syntax error anywhere, which then is the answer.
    ///
    /// Past `deadline` it stops with `.decodeTimedOut`.
    ///
    /// With `release`, the body is the decoder's to consume: an account's transactions are given
    /// back as they are read (the caller holds no other copy and reads it no more), so the body
    /// and the decoded rows are not both held whole. A failure's syntax pass jumps over them.
    package static func decode(_ body: Data, shape: PayloadShape, deadline: DecodeDeadline? = nil,
                               release: BodyRelease? = nil) throws(UpstreamError) -> Payload {
        let first = try precheck(body)
        let result: Result<Payload, UpstreamError> = body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var cursor = JSONCursor(bytes, deadline: deadline?.instant)
            cursor.release = release
            cursor.refusesRepeatedKeys = true  // as the records' decoder: the next tool would take the last
            let decoded = decodeFields(&cursor, shape: shape, startsWith: first, deadline: deadline)
            guard case .failure(let error) = decoded, error != deadline?.error else { return decoded }
            var syntax = JSONCursor(bytes, deadline: deadline?.instant)
            syntax.proven = cursor.proven
            do throws(JSONCursor.Failure) {
                try syntax.skipValue()
                try syntax.expectEnd()
            } catch {
                return .failure(error.timedOut ? deadline!.error : .badData(error.message))
            }
            return decoded
        }
        return try result.get()
    }

    /// The fields of a body, and nothing but whitespace after it.
    private static func decodeFields(_ cursor: inout JSONCursor, shape: PayloadShape, startsWith first: UInt8,
                                     deadline: DecodeDeadline?) -> Result<Payload, UpstreamError> {
        do {
            switch shape {
            case .account:
                let (account, badDate) = try readAccountEnvelope(&cursor)
                try cursor.expectEnd()
                // Judged last, as the Foundation reading does: any other error outranks a bad date.
                if let badDate { return .failure(Self.badDate(at: badDate.index, badDate.text)) }
                return .success(.account(account))
            case .jokes:
                let jokes = try readJokes(&cursor, startsWith: first)
                try cursor.expectEnd()
                return .success(.jokes(jokes))
            }
        } catch let failure as JSONCursor.Failure {
            return .failure(failure.timedOut ? deadline!.error : .badData(failure.message))
        } catch let error as UpstreamError {
            return .failure(error)
        } catch {
            return .failure(.badData("\(error)"))
        }
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

    /// The first transaction whose date is not a real `yyyy-MM-dd HH:mm:ss`.
    private typealias BadDate = (index: Int, text: String)

    private static func readAccountEnvelope(_ cursor: inout JSONCursor) throws -> (UpstreamAccount, BadDate?) {
        guard cursor.peek() == UInt8(ascii: "{") else { throw try cursor.mismatch("an object") }
        var status = Field<Int>.missing
        var message = Field<String?>.value(nil)
        // Read where it stands (one pass over the body, not a skip and then a read); judged
        // after the status, as Foundation decodes the envelope's head before its body. A
        // missing body reads as null, as Foundation's optional does.
        var body = Field<(UpstreamAccount, BadDate?)?>.value(nil)
        try cursor.readObject { c, key throws(JSONCursor.Failure) in
            switch key {
            case "status": status = capture(&c) { c throws(JSONCursor.Failure) in try c.readInt() }
            case "message": message = capture(&c) { c throws(JSONCursor.Failure) in try c.readNull() ? nil : try c.readString() }
            case "body": body = capture(&c) { c throws(JSONCursor.Failure) in try c.readNull() ? nil : try readAccountBody(&c) }
            default: try c.skipValue()
            }
        }
        let code = try status.get(cursor, "status")
        let text = try message.get(cursor, "message")
        guard code == 200 else { throw UpstreamError.envelope(status: code, message: text ?? "(no message)") }
        guard let account = try body.get(cursor, "body") else {
            throw UpstreamError.envelope(status: code, message: text.map { "\($0) (body is null)" } ?? "body is null")
        }
        return account
    }

    private static func readAccountBody(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> (UpstreamAccount, BadDate?) {
        guard cursor.peek() == UInt8(ascii: "{") else { throw try cursor.mismatch("an object") }
        var name = Field<String>.missing
        var balance = Field<Double>.missing
        var transactions = Field<([UpstreamTransaction], BadDate?)>.missing
        try cursor.readObject { c, key throws(JSONCursor.Failure) in
            switch key {
            case "name": name = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
            case "currentBalance": balance = capture(&c) { c throws(JSONCursor.Failure) in try c.readDouble() }
            case "transactions": transactions = capture(&c) { c throws(JSONCursor.Failure) in try readTransactions(&c) }
            default: try c.skipValue()
            }
        }
        // Judged in declaration order, as Foundation does.
        let nameValue = try name.get(cursor, "name")
        let balanceValue = try balance.get(cursor, "currentBalance")
        let (items, badDate) = try transactions.get(cursor, "transactions")
        return (UpstreamAccount(name: nameValue, balance: balanceValue, transactions: items), badDate)
    }

    /// A date as read: checked later, so a bad one is kept as its text.
    private enum DateField {
        case valid(TransactionDate)
        case invalid(String)
    }

    private static func readDate(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> DateField {
        // Upstream dates are plain ASCII: parsed in place, with no String built.
        if let bytes = cursor.readPlainASCIIString() {
            if let date = TransactionDate(upstream: bytes) { return .valid(date) }
            return .invalid(String(decoding: bytes, as: UTF8.self))
        }
        let text = try cursor.readString()
        return TransactionDate(upstream: text).map { .valid($0) } ?? .invalid(text)
    }

    private static func readTransactions(_ cursor: inout JSONCursor) throws(JSONCursor.Failure) -> ([UpstreamTransaction], BadDate?) {
        guard cursor.peek() == UInt8(ascii: "[") else { throw try cursor.mismatch("an array") }
        var items: [UpstreamTransaction] = []
        var badDate: BadDate?
        var vendors = RecentTexts()
        // About 80 bytes of JSON per transaction: one allocation instead of twenty doublings.
        items.reserveCapacity((cursor.bytes.count - cursor.position) / 80)
        var first = 0
        try cursor.readArray { c, index throws(JSONCursor.Failure) in
            // Every element before this one was read whole: proven, and given back if the body
            // is the decoder's to consume.
            if index == 0 { first = c.position } else { c.prove(from: first, to: c.position) }
            if let (item, date) = readTransactionQuickly(&c, &vendors) {
                if case .invalid(let text) = date, badDate == nil { badDate = (index, text) }
                items.append(item)
                return
            }
            guard c.peek() == UInt8(ascii: "{") else { throw try c.mismatch("an object") }
            var type = Field<Int>.missing, vendor = Field<String>.missing
            var amount = Field<Double>.missing, date = Field<DateField>.missing
            try c.readObject { c, key throws(JSONCursor.Failure) in
                switch key {
                case "type": type = capture(&c) { c throws(JSONCursor.Failure) in try c.readInt() }
                case "vendor": vendor = capture(&c) { c throws(JSONCursor.Failure) in try c.readString() }
                case "amount": amount = capture(&c) { c throws(JSONCursor.Failure) in try c.readDouble() }
                case "date": date = capture(&c) { c throws(JSONCursor.Failure) in try readDate(&c) }
                default: try c.skipValue()
                }
            }
            // Judged in declaration order, as Foundation does.
            let typeValue = try type.get(c, "type")
            let vendorValue = try vendor.get(c, "vendor")
            let amountValue = try amount.get(c, "amount")
            let dateValue: TransactionDate
            switch try date.get(c, "date") {
            case .valid(let valid): dateValue = valid
            case .invalid(let text):
                if badDate == nil { badDate = (index, text) }
                dateValue = TransactionDate(digits: 0)  // never used: the body is refused
            }
            items.append(UpstreamTransaction(type: typeValue, vendor: vendorValue, amount: amountValue, date: dateValue))
        }
        return (items, badDate)
    }

    /// The common transaction read quickly: an object whose keys are plain ASCII and whose
    /// four fields are all there and well typed. For anything else it returns nil with the
    /// cursor where it was, and the exact reading (which names the error) takes the object.
    private static func readTransactionQuickly(_ c: inout JSONCursor, _ vendors: inout RecentTexts) -> (UpstreamTransaction, DateField)? {
        let start = c.position
        // A field seen twice sends the object to the exact reading, where the first value
        // wins, as in Foundation.
        var type: Int?, vendor: String?, amount: Double?, date: DateField?
        // The object counts toward the nesting limit, as every other one does.
        c.depth += 1
        defer { c.depth -= 1 }
        read: do {
            guard c.peek() == UInt8(ascii: "{"), c.depth <= JSONCursor.maxDepth else { break read }
            c.position += 1
            while true {
                guard let key = c.readPlainASCIIString(), c.peek() == UInt8(ascii: ":") else { break read }
                c.position += 1
                if JSONCursor.isKey(key, "type") {
                    guard type == nil, let value = try? c.readInt() else { break read }
                    type = value
                } else if JSONCursor.isKey(key, "vendor") {
                    guard vendor == nil else { break read }
                    if let plain = c.readPlainASCIIString() {
                        vendor = vendors.text(plain)
                    } else {
                        guard let value = try? c.readString() else { break read }
                        vendor = value
                    }
                } else if JSONCursor.isKey(key, "amount") {
                    guard amount == nil, let value = try? c.readDouble() else { break read }
                    amount = value
                } else if JSONCursor.isKey(key, "date") {
                    guard date == nil, let value = try? readDate(&c) else { break read }
                    date = value
                } else {
                    guard (try? c.skipValue()) != nil else { break read }
                }
                switch c.peek() {
                case UInt8(ascii: ","): c.position += 1
                case UInt8(ascii: "}"):
                    c.position += 1
                    guard let type, let vendor, let amount, let date else { break read }
                    let when: TransactionDate
                    if case .valid(let valid) = date { when = valid } else { when = TransactionDate(digits: 0) }
                    return (UpstreamTransaction(type: type, vendor: vendor, amount: amount, date: when), date)
                default: break read
                }
            }
        }
        c.position = start
        return nil
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
