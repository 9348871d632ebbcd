import FoundationEssentials
import Glibc

/// Where a generic JSON source's records are and what identifies one.
///
/// ```swift
/// if let layout = try cache.sources().first(where: { $0.name == "repos" })?.layout { print(layout.keyDescription) }
/// ```
public struct RecordLayout: Sendable, Equatable {
    /// Where the records are: `$` (the response itself), `$.results`, `$.data.items`. An array
    /// there holds records; a single object is one record.
    public var rows: JSONPath
    /// The fields whose values identify a record: `id`, or `user.id,repo` (dot paths).
    public var key: [JSONPath]
    /// How to find the next page, if the API pages.
    public var next: NextPage?
    /// The query parameter a cursor, offset, page number or last key is sent as.
    public var nextParam: String?
    /// With `next = .page`: the first page's number (1 unless set).
    public var firstPage: Int?
    /// With `next = .lastKey`: the boolean that says more pages follow (`$.has_more`).
    public var hasMore: JSONPath?
    /// Reaching this many pages fails the sync rather than caching part of the data.
    public var maxPages: Int
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

        package static let defaultFullEvery = 86_400

        /// The value sent after `watermark`: less the lag, for an ISO 8601 time (written back in
        /// the same form) or a number (taken as seconds); any other value as it is.
        package func since(_ watermark: String) -> String {
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

    public static let defaultMaxPages = 100

    public init(rows: JSONPath = JSONPath(), key: [JSONPath], next: NextPage? = nil, nextParam: String? = nil,
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
    public enum NextPage: Sendable, Equatable {
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
        public init?(_ text: String) {
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

        public var description: String {
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
    public var singleKeyField: String? { key.count == 1 && key[0].keys.count == 1 ? key[0].keys[0] : nil }

    /// The key as `sources list` shows it and the database stores it: `id` or `user.id,repo`.
    public var keyDescription: String { key.map(\.dotted).joined(separator: ",") }
}

/// A path of object keys into a JSON value: `$` is the value itself, `$.data.items` two keys down.
/// A key that is not a plain name goes in brackets: `$['@odata.nextLink']`, `$.data["items"]`.
/// Key fields are written without the `$.` (`user.id`).
///
/// ```swift
/// let path = JSONPath("$['@odata.nextLink']")   // nil for text that is not a path
/// ```
public struct JSONPath: Sendable, Equatable, Hashable {
    public var keys: [String]

    public init(_ keys: [String] = []) { self.keys = keys }

    /// `$`, `$.a.b`, `$['a.b']`, or (for key fields) `a.b`; nil for an empty key or a malformed path.
    /// A name runs to the next `.` or `['`/`["`: any other character is part of it (`items[]`
    /// is one key, as paths stored before brackets were read have it).
    public init?(_ text: String) {
        var rest = Substring(text)
        if rest.hasPrefix("$") {
            rest = rest.dropFirst()
            if rest.isEmpty { keys = []; return }
        } else if !Self.opensBracket(rest) {
            rest = "." + rest  // a key field: `a.b` is `$.a.b`
        }
        var keys: [String] = []
        while let first = rest.first {
            if first == "." {
                rest = rest.dropFirst()
                var end = rest.startIndex
                while end < rest.endIndex, rest[end] != ".", !Self.opensBracket(rest[end...]) { end = rest.index(after: end) }
                let name = rest[..<end]
                guard !name.isEmpty, !name.contains("$") else { return nil }
                keys.append(String(name))
                rest = rest[end...]
            } else if Self.opensBracket(rest) {
                // ['name'] or ["name"]: any characters but that quote.
                let quote = rest[rest.index(after: rest.startIndex)]
                rest = rest.dropFirst(2)
                guard let close = rest.firstIndex(of: quote) else { return nil }
                let name = rest[..<close]
                rest = rest[rest.index(after: close)...]
                guard !name.isEmpty, rest.first == "]" else { return nil }
                keys.append(String(name))
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        guard !keys.isEmpty else { return nil }
        self.keys = keys
    }

    private static func opensBracket(_ text: Substring) -> Bool { text.hasPrefix("['") || text.hasPrefix("[\"") }

    /// Whether `text` holds a `[` or `]` outside a quoted name (`$.a[0]`, `$.a[`, `$.a[-1]`):
    /// an array index, which paths do not follow. Such a path, given as an option, is refused
    /// rather than read as a key literally named `a[0]`; a key with brackets in its name is
    /// written quoted, `$['a[0]']`. (Stored paths from before brackets were read still load.)
    package static func indexesAnArray(_ text: String) -> Bool {
        var rest = Substring(text)
        while let first = rest.first {
            if opensBracket(rest) {
                let quote = rest[rest.index(after: rest.startIndex)]
                rest = rest.dropFirst(2)
                guard let close = rest.firstIndex(of: quote) else { return false }  // malformed: JSONPath refuses it
                rest = rest[rest.index(after: close)...].dropFirst()  // the quote, then its `]`
            } else if first == "[" || first == "]" {
                return true
            } else {
                rest = rest.dropFirst()
            }
        }
        return false
    }

    /// Key fields as written after `--key`: `id`, or `user.id,repo`, commas inside brackets kept.
    package static func fields(_ text: String) -> [JSONPath?] {
        var fields: [String] = [], current = "", quote: Character?
        var rest = Substring(text)
        while let character = rest.first {
            if let open = quote {
                if character == open { quote = nil }
            } else if opensBracket(rest) {
                quote = rest[rest.index(after: rest.startIndex)]
                current += "[" + String(quote!)
                rest = rest.dropFirst(2)
                continue
            } else if character == "," {
                fields.append(current)
                current = ""
                rest = rest.dropFirst()
                continue
            }
            current.append(character)
            rest = rest.dropFirst()
        }
        fields.append(current)
        return fields.map { JSONPath($0.trimmingSpaces()) }
    }

    /// A key written as it is (else in brackets): nothing in it a path or a key list gives meaning to.
    private static func isPlain(_ key: String) -> Bool {
        !key.isEmpty && !key.contains(".") && !key.contains("$") && !key.contains(",")
            && !key.contains("['") && !key.contains("[\"") && key.trimmingSpaces() == key
    }

    /// `['key']`, or `["key"]` for a key holding `'`.
    private static func bracketed(_ key: String) -> String { key.contains("'") ? "[\"" + key + "\"]" : "['" + key + "']" }

    /// As SQLite's JSON functions take it: `$."a"."b"` (keys hold no `"` or `\`: see the settings' check).
    package var sqlitePath: String { "$" + keys.map { ".\"" + $0 + "\"" }.joined() }

    public var description: String {
        "$" + keys.map { Self.isPlain($0) ? "." + $0 : Self.bracketed($0) }.joined()
    }

    /// As a key field is written: `user.id`; a key that is not a plain name in brackets (`['a.b']`).
    public var dotted: String {
        keys.enumerated().map { index, key in
            Self.isPlain(key) ? (index == 0 ? key : "." + key) : Self.bracketed(key)
        }.joined()
    }
}

/// How a response is reconciled with the cache.
///
/// ```swift
/// try cache.addSource(name: "jokes", kind: .jokes, url: "https://jokes.example/jokes/ten", SourceSettings(mode: "merge"))
/// ```
public enum SyncMode: String, Sendable, CaseIterable {
    /// Insert new rows, update changed ones, remove rows the response no longer has.
    case replace
    /// Insert or update by id; never remove a row because it is absent.
    case merge
}

/// A named upstream URL of one kind, as stored in the `sources` table.
/// The kinds of upstream this tool understands: the two it was made for, any JSON API described
/// by a `RecordLayout`, and CSV tables. What each is lives in its folder under `Kinds/`, and the
/// registry there (`Kinds/SourceKind.swift`) is the one place that switches on it.
///
/// ```swift
/// try cache.addSource(name: "items", kind: .json, url: "https://api.example/items", SourceSettings(key: "id"))
/// ```
public enum SourceKind: String, Sendable, CaseIterable {
    case account, jokes, json, csv
}

/// A configured upstream: its name, kind, URL and the settings its syncs follow.
///
/// ```swift
/// for source in try cache.sources() { print(source.name, source.kind, source.displayURL, source.ttlSeconds) }
/// ```
public struct Source: Sendable, Equatable {
    public static let defaultTTL = 15 * 60
    public static let allowedSchemes: Set<String> = ["http", "https", "file"]

    public var name: String
    public var kind: SourceKind
    public var url: URL
    public var mode: SyncMode
    public var ttlSeconds: Int
    /// Extra request headers, as `(name, value)`.
    public var headers: [Header]
    /// The environment variable whose value is sent as a bearer token; only its name is stored.
    public var tokenEnv: String?
    /// The names of stored headers that fail the header check (made by an older cache): they
    /// are not sent.
    package var unsentHeaders: [String] = []

    /// OAuth2 client credentials: a token asked for at sync time, sent as the bearer token.
    package var oauth: OAuthClient?

    /// `--oauth-token-url URL --client-id-env VAR --client-secret-env VAR [--scope S]`: only the
    /// URL, the variables' names and the scope are stored; the secret and tokens never are.
    package struct OAuthClient: Sendable, Equatable {
        package var tokenURL: URL
        package var clientIDEnv: String
        package var clientSecretEnv: String
        package var scope: String?
    }

    /// The token variable (or OAuth2 client variable) this source names and `environment`
    /// lacks (unset or empty), if any: a read from such a shell must not start a refresh that
    /// can only fail (cron has the token).
    public func missingToken(in environment: [String: String]) -> String? {
        let variables = [tokenEnv, oauth?.clientIDEnv, oauth?.clientSecretEnv].compactMap { $0 }
        return variables.first { (environment[$0] ?? "").isEmpty }
    }
    public var maxBytes: Int?
    /// A PEM bundle of CAs trusted instead of the system's; only its path is stored.
    public var caCert: String?
    /// How many cached rows one `replace` sync may remove before it is held (nil: the default).
    public var maxDelete: RemovalLimit?
    /// How long the source may go without a successful sync before `status --max-age` reports
    /// it; nil: the age given on the command line.
    public var alertAfterSeconds: Int?
    /// For `json` sources: where the records are and what identifies them.
    public var layout: RecordLayout?
    /// Whether the source's rows are kept in the full-text index `cache search` reads (on unless
    /// `--search off`: indexing a million json records takes about twice as long as syncing them).
    public var searchable = true
    /// Which row of `sources` this was read from (its rowid and creation time): a source removed
    /// and added again under the same name is another source, and a sync of the old one must
    /// not land in it. Nil for a source not read from the database.
    public var identity: String?

    /// A request header the source sends with each fetch.
    ///
    /// ```swift
    /// for header in source.headers { print(header.name) }   // values may be secrets: shown by name
    /// ```
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) { self.name = name; self.value = value }

        /// Parses `Name: value`.
        public init?(line: String) {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingSpaces()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            let token = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)
            // Checked on Unicode scalars: Swift reads "\r\n" as one Character, equal to neither
            // "\r" nor "\n", so a Character test would let a header smuggle a second one in.
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(token.contains),
                  !value.unicodeScalars.contains(where: Self.isControl) else { return nil }
            self.init(name: name, value: value)
        }

        /// C0 controls (tab, CR and LF among them), DEL and C1 controls.
        public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }

        public var line: String { "\(name): \(value)" }
    }

    public init(name: String, kind: SourceKind, url: URL, mode: SyncMode? = nil,
                ttlSeconds: Int = Source.defaultTTL, headers: [Header] = [],
                tokenEnv: String? = nil, maxBytes: Int? = nil, caCert: String? = nil, maxDelete: RemovalLimit? = nil,
                alertAfterSeconds: Int? = nil, layout: RecordLayout? = nil) {
        self.name = name
        self.kind = kind
        self.url = url
        self.mode = mode ?? kind.defaultMode
        self.ttlSeconds = ttlSeconds
        self.headers = headers
        self.tokenEnv = tokenEnv
        self.maxBytes = maxBytes
        self.caCert = caCert
        self.maxDelete = maxDelete
        self.alertAfterSeconds = alertAfterSeconds
        self.layout = layout
    }

    /// Source names are used in commands and file-like contexts: letters, digits, `-`, `_`, `.`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.hasPrefix("-")
            && name.unicodeScalars.allSatisfy { $0.isASCII && (Character($0).isLetter || Character($0).isNumber || "-_.".unicodeScalars.contains($0)) }
    }

    /// The URL as it may appear in messages: no credentials, no query string, no fragment.
    public var displayURL: String { Self.redacted(url) }

    public static func redacted(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(unprintable URL)" }
        parts.user = nil
        parts.password = nil
        parts.fragment = nil
        // The query stays (page=2 tells sources apart); values that look secret do not.
        parts.percentEncodedQueryItems = parts.percentEncodedQueryItems?.map { item in
            isSecret(item.name) && !(item.value ?? "").isEmpty ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return parts.string ?? "(unprintable URL)"
    }

    /// Query parameter names that carry credentials: `token`, `api_key`, `X-Amz-Signature`,
    /// `apikey`, ... judged by the words of the name (`monkey` is not a key).
    static func isSecret(_ name: String) -> Bool {
        let lowered = (name.percentDecoded ?? name).lowercased()
        let words = lowered.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map(String.init)
        let secretWords: Set<String> = ["token", "key", "secret", "password", "passwd", "pwd", "sig", "signature", "auth",
                                        "credential", "credentials", "session", "apikey", "accesstoken", "authtoken", "sessionid"]
        return words.contains(where: secretWords.contains)
    }
}
