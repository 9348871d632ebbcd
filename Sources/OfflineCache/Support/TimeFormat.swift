import FoundationEssentials

/// A moment written as an API asks for it, in the strftime directives Airbyte's manifests use
/// for a request's time (`%Y-%m-%d`, `%Y-%m-%dT%H:%M:%SZ`, `%s` for seconds since 1970),
/// always in UTC.
package struct TimeFormat: Sendable, Equatable {
    package let pattern: String

    /// The directives it writes: year, month, day, hour, minute, second, microseconds, seconds
    /// since 1970, milliseconds since 1970 (`%ms`, the CDK's), the zone as +0000 and as UTC, `%%`.
    static let directives: Set<String> = ["Y", "m", "d", "H", "M", "S", "f", "s", "ms", "z", "Z", "%"]

    /// Nil for a pattern with a directive it does not write, or none at all.
    package init?(_ pattern: String) {
        guard pattern.contains("%"), Self.tokens(pattern) != nil else { return nil }
        self.pattern = pattern
    }

    /// The pattern's literal text and directives, in order; nil for an unknown directive.
    private static func tokens(_ pattern: String) -> [(literal: Bool, text: String)]? {
        var tokens: [(Bool, String)] = [], rest = Substring(pattern)
        while let percent = rest.firstIndex(of: "%") {
            if percent > rest.startIndex { tokens.append((true, String(rest[..<percent]))) }
            let after = rest[rest.index(after: percent)...]
            let name = after.hasPrefix("ms") ? "ms" : after.first.map(String.init) ?? ""
            guard directives.contains(name) else { return nil }
            tokens.append((false, name))
            rest = after.dropFirst(name.count)
        }
        if !rest.isEmpty { tokens.append((true, String(rest))) }
        return tokens
    }

    package func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
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
            case "ms": String(Int64((seconds * 1000).rounded(.down)))
            case "z": "+0000"
            case "Z": "UTC"
            default: "%"
            }
        }.joined()
    }

    /// A watermark as a moment: an RFC 3339 time, or a number of seconds since 1970.
    package static func moment(_ text: String) -> Date? {
        if let date = Timestamp.parseRFC3339(text) { return date }
        if let number = Double(text), number.isFinite, text.first.map({ $0.isNumber || $0 == "-" }) == true {
            return Date(timeIntervalSince1970: number)
        }
        return nil
    }
}
