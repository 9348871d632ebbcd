import FoundationEssentials

/// When a decode must stop: the sync's deadline, with its timeout for the message.
package struct DecodeDeadline: Sendable {
    package let instant: ContinuousClock.Instant
    package let seconds: Double

    package init(_ instant: ContinuousClock.Instant, seconds: Double) {
        self.instant = instant
        self.seconds = seconds
    }

    /// The failure a decode past it reports.
    var error: UpstreamError { .decodeTimedOut(seconds: seconds) }
}

/// How a decoder gives back the bytes of a body it owns once it has read them and proven them
/// well formed, so the body and what is decoded from it are not both held whole: the bytes are
/// gone, and a later look at them (a failure's syntax check) jumps over them (`JSONCursor.proven`).
package struct BodyRelease: Sendable {
    /// How many proven bytes gather before they are given back.
    let every: Int
    /// Gives back `count` bytes at a pointer (whole pages of them, or whatever the test wants).
    let discard: @Sendable (UnsafeMutableRawPointer, Int) -> Void

    package init(every: Int, discard: @escaping @Sendable (UnsafeMutableRawPointer, Int) -> Void) {
        self.every = every
        self.discard = discard
    }

    /// The whole pages inside the range go back to the system (`MADV_DONTNEED`): they read as
    /// zeros from then on, and count no more toward the process's memory. Every 4 MiB: what is
    /// read but not yet given back is at the peak too (a larger step raised a large sync's peak; figures:
    /// docs/performance.md).
    package static let pages = BodyRelease(every: 4 << 20) { start, count in Memory.giveBack(start, count: count) }
}

/// A byte-level JSON reader that decodes straight into the values the payload needs, with no
/// intermediate tree: the body is read in place. It accepts JSON as RFC 8259's grammar has it
/// and nothing else — every value checked, those it skips included: no trailing comma, no
/// number outside the grammar, no bad escape, control character or invalid UTF-8 in a string —
/// and reports errors in the words `PayloadDecoder` uses for Foundation's.
struct JSONCursor {
    /// Why reading failed: a message in PayloadDecoder's words.
    struct Failure: Error {
        let message: String
        /// The reader gave up at its deadline: not a fault of the body.
        var timedOut = false
        /// An object named a key twice, and `refusesRepeatedKeys` was set: JSON, but ambiguous.
        var repeatedKey = false
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// How many objects and arrays the reader is inside; more than `maxDepth` is refused, as
    /// Foundation refuses it (and the recursion stays far from the end of a thread's stack).
    var depth = 0
    static let maxDepth = 512
    /// Where the reader is, for messages: "body", "transactions", 3, "amount".
    var path: [PathComponent] = []
    /// Whether an object that names a key twice is refused (`Failure.repeatedKey`) rather than
    /// read with the first value, as the record decoders read it.
    var refusesRepeatedKeys = false

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    /// Bytes already read and proven well formed that may be gone: from the first element of an
    /// array to where the array stood before a later one. Reading that array again (a syntax
    /// check, or skipping a value that failed) jumps from its first element to there.
    var proven: (from: Int, to: Int)?
    /// What gives proven bytes back, if the body is the decoder's to consume; and how far it has.
    var release: BodyRelease?
    private var releasedTo = 0

    /// Past this instant reading stops (checked every 4,096 values): the sync's `--timeout`
    /// covers the decode too.
    var deadline: ContinuousClock.Instant?
    private var steps: UInt32 = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, deadline: ContinuousClock.Instant? = nil) {
        self.bytes = bytes
        self.deadline = deadline
    }

    static let timedOut = Failure(message: "decoding the body ran past the sync's timeout", timedOut: true)

    /// Counts one value read; throws `timedOut` once the deadline has passed.
    @inline(__always)
    mutating func tick() throws(Failure) {
        steps &+= 1
        guard steps & 0xFFF == 0, let deadline else { return }
        if ContinuousClock.now >= deadline { throw Self.timedOut }
    }

    static let syntaxError = Failure(message: "not valid JSON (malformed or cut short)")

    // MARK: Structure

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, without consuming it; nil at the end.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    mutating func consume(_ byte: UInt8) throws(Failure) {
        guard peek() == byte else { throw Self.syntaxError }
        position += 1
    }

    /// After the top-level value: only whitespace may follow.
    mutating func expectEnd() throws(Failure) {
        guard peek() == nil else { throw Self.syntaxError }
    }

    /// Reads an object, calling `field` with each key; `field` must read (or skip) the value.
    /// Keys are visited in order. A repeated key is skipped: like Foundation's decoder, the
    /// first value wins (unless `refusesRepeatedKeys`).
    mutating func readObject(_ field: (inout JSONCursor, String) throws(Failure) -> Void) throws(Failure) {
        try consume(UInt8(ascii: "{"))
        try enter()
        defer { depth -= 1 }
        if peek() == UInt8(ascii: "}") { position += 1; return }
        var seen = SeenKeys()
        while true {
            try tick()
            // After `{` or `,` comes a key: `{"a": 1,}` is not JSON.
            guard peek() == UInt8(ascii: "\"") else { throw Self.syntaxError }
            let key = try readStringToken()  // keys are checked strictly, as Foundation does
            try consume(UInt8(ascii: ":"))
            if !seen.insert(key) {
                if refusesRepeatedKeys {
                    throw Failure(message: "\(pathText): \"\(key)\" is named twice in one object", repeatedKey: true)
                }
                try skipValue()
            } else {
                path.append(.key(key))
                try field(&self, key)
                path.removeLast()
            }
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return
            default: throw Self.syntaxError
            }
        }
    }

    /// The keys an object has shown so far, told apart by their bytes (`ExactText`: `é` and
    /// `e` + U+0301 are two keys). Records have a handful, looked through as a list; past 16 they
    /// go into a set, so an object of 160,000 keys is read in linear time.
    struct SeenKeys {
        private var few: [String] = []
        private var many: Set<ExactText>?

        /// False when the key was seen before.
        mutating func insert(_ key: String) -> Bool {
            if many != nil { return many!.insert(ExactText(key)).inserted }
            if few.contains(where: { $0.utf8.elementsEqual(key.utf8) }) { return false }
            few.append(key)
            if few.count > 16 { many = Set(few.map(ExactText.init)); few = [] }
            return true
        }
    }

    /// One level deeper into objects and arrays (the caller leaves it with `depth -= 1`).
    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maxDepth else { throw Self.syntaxError }
    }

    /// Reads an array, calling `element` with each index.
    mutating func readArray(_ element: (inout JSONCursor, Int) throws(Failure) -> Void) throws(Failure) {
        try consume(UInt8(ascii: "["))
        try enter()
        defer { depth -= 1 }
        if peek() == UInt8(ascii: "]") { position += 1; return }
        var index = 0
        while true {
            try tick()
            if index == 0, let proven, position == proven.from { position = proven.to }
            path.append(.index(index))
            try element(&self, index)
            path.removeLast()
            index += 1
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return
            default: throw Self.syntaxError
            }
        }
    }

    /// Notes that an array's elements from its first (at `from`) up to `to`, where the array
    /// stands before its next element, were read and are well formed; past `release.every` bytes
    /// more of them, gives them back.
    mutating func prove(from: Int, to: Int) {
        proven = (from, to)
        guard let release, to - max(from, releasedTo) >= release.every else { return }
        let start = max(from, releasedTo)
        let base = UnsafeMutableRawPointer(mutating: bytes.baseAddress!)
        release.discard(base + start, to - start)
        releasedTo = to
    }

    /// Skips one value of any kind, checking its syntax.
    mutating func skipValue() throws(Failure) {
        switch peek() {
        case UInt8(ascii: "{"): try skipObject()
        case UInt8(ascii: "["): try readArray { cursor, _ throws(Failure) in try cursor.skipValue() }
        case UInt8(ascii: "\""): try skipStringToken()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case .some(let byte) where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39):
            try skipNumberToken()
        default: throw Self.syntaxError
        }
    }

    /// Skips an object, its keys checked as strictly as any string but not built.
    private mutating func skipObject() throws(Failure) {
        try consume(UInt8(ascii: "{"))
        try enter()
        defer { depth -= 1 }
        if peek() == UInt8(ascii: "}") { position += 1; return }
        while true {
            try tick()
            guard peek() == UInt8(ascii: "\"") else { throw Self.syntaxError }
            try skipStringToken()
            try consume(UInt8(ascii: ":"))
            try skipValue()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return
            default: throw Self.syntaxError
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw Self.syntaxError }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { throw Self.syntaxError }
        position += count
    }

    /// Consumes `null` if it is next.
    mutating func readNull() throws(Failure) -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(Failure) -> Bool {
        if peek() == UInt8(ascii: "t") { try literal("true"); return true }
        try literal("false")
        return false
    }
}
