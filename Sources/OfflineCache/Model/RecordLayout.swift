import FoundationEssentials

/// Where a generic JSON source's records are and what identifies one.
///
/// ```swift
/// if let layout = try cache.sources().first(where: { $0.name == "repos" })?.layout { print(layout.keyDescription) }
/// ```
package struct RecordLayout: Sendable, Equatable {
    /// Where the records are: `$` (the response itself), `$.results`, `$.data.items`. An array
    /// there holds records; a single object is one record.
    package var rows: JSONPath
    /// The fields whose values identify a record: `id`, or `user.id,repo` (dot paths).
    package var key: [JSONPath]
    /// How to find the next page, if the API pages.
    package var next: NextPage?
    /// The query parameter a cursor, offset, page number or last key is sent as.
    package var nextParam: String?
    /// With `next = .page`: the first page's number (1 unless set).
    package var firstPage: Int?
    /// With `next = .lastKey`: the boolean that says more pages follow (`$.has_more`).
    package var hasMore: JSONPath?
    /// With `next = .offset` or `.page`: the records a full page holds (as the URL asks for);
    /// a page with fewer is the last, as Airbyte's CDK reads a `page_size`.
    package var pageSize: Int?
    /// Reaching this many pages fails the sync rather than caching part of the data.
    package var maxPages: Int
    /// For a csv source: the byte between fields (`,` unless set).
    package var delimiter: UInt8?
    /// Syncs that ask only for what changed since the last one, with a full sweep now and then.
    package var incremental: Incremental?

    /// `--since-param P --cursor-field FIELD [--lag DUR] [--full-every DUR]`.
    package struct Incremental: Sendable, Equatable {
        /// The query parameter the watermark (less the lag) is sent as.
        package var sinceParam: String
        /// The record field whose largest value is the watermark.
        package var cursorField: JSONPath
        package var lagSeconds: Int = 0
        package var fullEverySeconds: Int = Incremental.defaultFullEvery
        /// How the watermark is written in the request (`--since-format`); nil: as the records
        /// have it.
        package var sinceFormat: TimeFormat?

        package static let defaultFullEvery = 86_400

        /// The value sent after `watermark`: less the lag, for an ISO 8601 time (written back in
        /// the same form) or a number (taken as seconds); any other value as it is.
        package func since(_ watermark: String) -> String {
            // In the API's format when it has one and the watermark reads as a moment; else as
            // the records wrote it.
            if let sinceFormat, let moment = sinceFormat.moment(watermark) {
                return sinceFormat.format(moment.addingTimeInterval(-Double(lagSeconds)))
            }
            return lessLag(watermark)
        }

        /// The watermark less the lag, written as the watermark was.
        func lessLag(_ watermark: String) -> String {
            guard lagSeconds > 0 else { return watermark }
            if let earlier = Self.decimal(watermark, less: lagSeconds) { return earlier }
            if let number = Double(watermark), number.isFinite, watermark.first.map({ $0.isNumber || $0 == "-" }) == true {
                return JSONValue.canonicalNumber(number - Double(lagSeconds))
            }
            guard let date = Timestamp.parse(watermark) else { return watermark }
            let earlier = date.addingTimeInterval(-Double(lagSeconds))
            // As the API wrote it: with milliseconds only if the watermark had them.
            let text = Timestamp.format(earlier)
            return watermark.contains(".") ? text : String(text.prefix(19)) + "Z"
        }

        /// A plain decimal's text (`-?digits(.digits)?`) less whole seconds, digit by digit, so
        /// no digit is lost to a Double: `1700000000.123456` less 300 is `1699999700.123456`,
        /// and an integer above 2^63 keeps every digit. Nil for any other text, and for a
        /// number smaller than the lag (its Double is exact enough).
        static func decimal(_ text: String, less seconds: Int) -> String? {
            var bytes = Array(text.utf8)
            let negative = bytes.first == UInt8(ascii: "-")
            if negative { bytes.removeFirst() }
            let point = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.count
            let whole = Array(bytes[..<point]), fraction = bytes[point...]
            func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
            guard !whole.isEmpty, whole.allSatisfy(isDigit), fraction.isEmpty || (fraction.count > 1 && fraction.dropFirst().allSatisfy(isDigit))
            else { return nil }
            // The whole part's digits, least significant first, moved by `seconds`: up for a
            // negative number (it grows away from zero), down for a positive one.
            var digits = whole.reversed().map { Int($0 - 0x30) }
            var carry = seconds
            for index in digits.indices where carry != 0 {
                let value = negative ? digits[index] + carry % 10 : digits[index] - carry % 10
                carry /= 10
                if value < 0 { digits[index] = value + 10; carry += 1 }
                else if value > 9 { digits[index] = value - 10; carry += 1 }
                else { digits[index] = value }
            }
            if carry != 0 {
                guard negative else { return nil }  // the lag is larger than the number
                while carry != 0 { digits.append(carry % 10); carry /= 10 }
            }
            while digits.count > 1 && digits.last == 0 { digits.removeLast() }
            let wholeText = String(decoding: digits.reversed().map { UInt8($0) + 0x30 }, as: UTF8.self)
            return (negative ? "-" : "") + wholeText + String(decoding: fraction, as: UTF8.self)
        }
    }

    /// Pages one sync follows unless `maxPages` says otherwise.
    package static let defaultMaxPages = 100

    /// Where the records are, what keys them, and how the pages follow one another.
    package init(rows: JSONPath = JSONPath(), key: [JSONPath], next: NextPage? = nil, nextParam: String? = nil,
                firstPage: Int? = nil, hasMore: JSONPath? = nil, maxPages: Int = RecordLayout.defaultMaxPages,
                delimiter: UInt8? = nil) {
        self.rows = rows
        self.key = key
        self.next = next
        self.nextParam = nextParam
        self.firstPage = firstPage
        self.hasMore = hasMore
        self.maxPages = maxPages
        self.delimiter = delimiter
    }

    /// A CSV delimiter from the command line: one printable ASCII character other than a quote,
    /// or `tab` (also `\t`).
    package static func delimiter(_ text: String) -> UInt8? {
        if text == "tab" || text == "\\t" || text == "\t" { return UInt8(ascii: "\t") }
        guard text.utf8.count == 1, let byte = text.utf8.first, (0x21...0x7E).contains(byte) || byte == 0x20,
              byte != UInt8(ascii: "\"") else { return nil }
        return byte
    }

    /// The delimiter as `sources list` shows it and the database keeps it.
    package static func delimiterText(_ byte: UInt8) -> String { byte == UInt8(ascii: "\t") ? "tab" : String(UnicodeScalar(byte)) }

    /// How a paged API says where its next page is.
    ///
    /// ```swift
    /// if case .body(let path)? = layout.next { print("next page at \(path)") }
    /// ```
    package enum NextPage: Sendable, Equatable {
        /// `Link: <…>; rel="next"` response headers (GitHub's style).
        case link
        /// A URL (or, with `nextParam`, a cursor) at this path in the body; null or absent ends.
        case body(JSONPath)
        /// A cursor in this response header, sent as `nextParam`; absent or empty ends.
        case header(String)
        /// `nextParam` is an offset: 0, then the count of records received so far.
        case offset
        /// `nextParam` counts pages from `firstPage`.
        case page
        /// The last record's key is sent as `nextParam` while the boolean at `hasMore` is true (Stripe).
        case lastKey

        /// `link`, `offset`, `page`, `last-key`, `header:NAME` or a path such as `$.next`.
        package init?(_ text: String) {
            switch text {
            case "link": self = .link
            case "offset": self = .offset
            case "page": self = .page
            case "last-key": self = .lastKey
            default:
                if text.hasPrefix("header:") {
                    let name = String(text.dropFirst("header:".count))
                    guard Source.Header(line: name + ": x")?.name == name else { return nil }
                    self = .header(name)
                    return
                }
                guard let path = JSONPath(text), !path.keys.isEmpty else { return nil }
                self = .body(path)
            }
        }

        package var description: String {
            switch self {
            case .link: "link"
            case .body(let path): path.description
            case .header(let name): "header:" + name
            case .offset: "offset"
            case .page: "page"
            case .lastKey: "last-key"
            }
        }

        package var isBodyPath: Bool {
            if case .body = self { return true }
            return false
        }

        /// Whether this style sends `nextParam` (a body path may instead hold a whole URL).
        package var needsParam: Bool {
            switch self {
            case .link, .body: false
            case .header, .offset, .page, .lastKey: true
            }
        }
    }

    /// The body path whose value paging reads: the next URL or cursor, or `hasMore`'s boolean.
    package var bodyValuePath: JSONPath? {
        switch next {
        case .body(let path)?: path
        case .lastKey?: hasMore
        default: nil
        }
    }

    /// The key when it is one top-level field (`id`), else nil.
    package var singleKeyField: String? { key.count == 1 && key[0].keys.count == 1 ? key[0].keys[0] : nil }

    /// The key as `sources list` shows it and the database stores it: `id` or `user.id,repo`.
    package var keyDescription: String { key.map(\.dotted).joined(separator: ",") }
}
