import FoundationEssentials

/// What a row's decoding failure says to a person: the field's path and what was found there.
/// `JSONDecoder` leaves either out at times: a number its field's type cannot hold (`119.74`
/// into an `Int`) is "The given data was not valid JSON", with no path at all. That field is
/// found by decoding again with each number of the record made `0` in turn: the one whose change
/// moves the failure on is the one.
enum DecodingReason {
    /// `retry` decodes a changed record with the same type, giving its error (nil: it decoded).
    static func of(_ error: any Error, json: String, retry: (String) -> (any Error)?) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let record = try? JSONValue.parse(Data(json.utf8))
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(name(type)), found \(found(record, at: context.codingPath))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(name(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty, let record, let culprit = numberThatDoesNotFit(record, retry: retry) {
                return "\(culprit.path): found \(culprit.text), which the field's type cannot hold (a fraction into a whole number, say, or past its range)"
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// `amount`, `items[2].price`; the record itself when the path is empty.
    static func path(_ keys: [any CodingKey]) -> String {
        guard !keys.isEmpty else { return "the record" }
        var text = ""
        for key in keys {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text
    }

    /// Where a decoding error stands, as `path` writes it.
    private static func errorPath(_ error: DecodingError) -> String? {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path(context.codingPath)
        case .keyNotFound(let key, let context): path(context.codingPath + [key])
        @unknown default: nil
        }
    }

    private static func name(_ type: Any.Type) -> String {
        String(describing: type)
    }

    /// The value at `keys` in the record, as JSON; "nothing" where there is none.
    private static func found(_ record: JSONValue?, at keys: [any CodingKey]) -> String {
        var value = record
        for key in keys {
            switch value {
            case .object(let pairs)?: value = pairs.first { $0.0 == key.stringValue }?.1
            case .array(let items)?: value = key.intValue.flatMap { items.indices.contains($0) ? items[$0] : nil }
            default: value = nil
            }
        }
        return value?.compact ?? "nothing"
    }

    /// The number of the record that its type cannot hold: decoding again with it made `0`
    /// fails otherwise (or not at all), where the others changed alone still fail as before.
    private static func numberThatDoesNotFit(_ record: JSONValue, retry: (String) -> (any Error)?) -> (path: String, text: String)? {
        var numbers: [(path: String, text: String, replaced: JSONValue)] = []
        func walk(_ value: JSONValue, _ path: String, _ rebuild: (JSONValue) -> JSONValue) {
            switch value {
            case .raw(let text):
                numbers.append((path, text, rebuild(.raw("0"))))
            case .object(let pairs):
                for (index, pair) in pairs.enumerated() {
                    walk(pair.1, path.isEmpty ? pair.0 : path + "." + pair.0) { changed in
                        var copy = pairs
                        copy[index].1 = changed
                        return rebuild(.object(copy))
                    }
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    walk(item, path + "[\(index)]") { changed in
                        var copy = items
                        copy[index] = changed
                        return rebuild(.array(copy))
                    }
                }
            default:
                break
            }
        }
        walk(record, "") { $0 }
        for number in numbers.prefix(64) {
            let error = retry(number.replaced.compact)
            if case DecodingError.dataCorrupted(let context)? = error, context.codingPath.isEmpty { continue }
            // Its zero is refused where it stands (an enum with no 0 case): not the one either.
            if let error = error as? DecodingError, errorPath(error) == number.path { continue }
            return (number.path, number.text)
        }
        return nil
    }
}
