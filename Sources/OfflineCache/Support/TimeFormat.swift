import FoundationEssentials

/// A moment written as an API asks for it, in the strftime directives Airbyte's manifests use
/// for a request's time (`%Y-%m-%d`, `%Y-%m-%dT%H:%M:%SZ`), always in UTC, or as a number since
/// 1970 in the CDK's whole-pattern forms (`%s`, `%ms`, `%s_as_float`, `%epoch_microseconds`).
package struct TimeFormat: Sendable, Equatable {
    package let pattern: String

    /// The directives it writes: year, month, day, hour, minute, second, microseconds, seconds
    /// since 1970, the zone as +0000 and as UTC, `%%`.
    static let directives: Set<String> = ["Y", "m", "d", "H", "M", "S", "f", "s", "z", "Z", "%"]

    /// The CDK's whole-pattern forms of a number since 1970, and the unit each counts in (a
    /// watermark in one of them is read in the same unit).
    static let epochs: [String: Double] = ["%s": 1, "%ms": 1_000, "%s_as_float": 1, "%epoch_microseconds": 1_000_000]

    /// Nil for a pattern with a directive it does not write, or none at all.
    package init?(_ pattern: String) {
        guard Self.epochs[pattern] != nil || (pattern.contains("%") && Self.tokens(pattern) != nil) else { return nil }
        self.pattern = pattern
    }

    /// How many of this format's units make a second: 1000 for `%ms`; 1 for a date.
    package var unitsPerSecond: Double { Self.epochs[pattern] ?? 1 }

    /// The pattern's literal text and directives, in order; nil for an unknown directive.
    private static func tokens(_ pattern: String) -> [(literal: Bool, text: String)]? {
        var tokens: [(Bool, String)] = [], rest = Substring(pattern)
        while let percent = rest.firstIndex(of: "%") {
            if percent > rest.startIndex { tokens.append((true, String(rest[..<percent]))) }
            let after = rest[rest.index(after: percent)...]
            let name = after.first.map(String.init) ?? ""
            guard directives.contains(name) else { return nil }
            tokens.append((false, name))
            rest = after.dropFirst(name.count)
        }
        if !rest.isEmpty { tokens.append((true, String(rest))) }
        return tokens
    }

    package func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        switch pattern {
        case "%ms", "%epoch_microseconds": return String(Int64((seconds * unitsPerSecond).rounded(.down)))
        case "%s_as_float": return JSONValue.canonicalNumber(seconds)
        default: break
        }
        let whole = Int64(seconds.rounded(.down))
        let micros = Int(((seconds - Double(whole)) * 1_000_000).rounded(.down))
        let time = CivilTime(utc: whole)
        let pad = { (value: Int, width: Int) in
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return (Self.tokens(pattern) ?? []).map { literal, text in
            guard !literal else { return text }
            return switch text {
            case "Y": pad(time.year, 4)
            case "m": pad(time.month, 2)
            case "d": pad(time.day, 2)
            case "H": pad(time.hour, 2)
            case "M": pad(time.minute, 2)
            case "S": pad(time.second, 2)
            case "f": pad(micros, 6)
            case "s": String(whole)
            case "z": "+0000"
            case "Z": "UTC"
            default: "%"
            }
        }.joined()
    }

    /// A watermark as a moment: an RFC 3339 time, or a number since 1970 in this format's unit
    /// (milliseconds for `%ms`, seconds for a date's format).
    package func moment(_ text: String) -> Date? {
        if let date = Timestamp.parseRFC3339(text) { return date }
        if let number = Double(text), number.isFinite, text.first.map({ $0.isNumber || $0 == "-" }) == true {
            return Date(timeIntervalSince1970: number / unitsPerSecond)
        }
        return nil
    }
}
