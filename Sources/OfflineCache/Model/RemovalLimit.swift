extension Source {
    /// How many cached rows one `replace` sync may remove before it is held: a glitch upstream (an
    /// empty list, a truncated page) must not wipe the offline copy. rclone's `--max-delete` and
    /// Android's `tooManyDeletions` are the precedents.
    ///
    /// The guard holds a sync that would remove more than the limit, and a sync that would remove
    /// every row of a non-empty cache unless the limit is 100%. A percentage allows at least one row,
    /// so a small cache can still lose a row: of 3 cached rows, 50% allows removing 1, and a sync
    /// removing 2 is held; a cache of 1 row is never emptied under 100%.
    ///
    /// ```swift
    /// let limit = RemovalLimit("20%")          // or RemovalLimit.rows(100); nil for other text
    /// ```
    public enum RemovalLimit: Sendable, Equatable, CustomStringConvertible {
        case rows(Int)
        case percent(Double)

        /// Half the cached rows: a sync that would remove more is held.
        public static let `default` = Source.RemovalLimit.percent(50)

        /// `"25"` (rows) or `"25%"`; nil when it is neither.
        public init?(_ text: String) {
            if text.hasSuffix("%") {
                guard let value = Double(text.dropLast()), value.isFinite, (0...100).contains(value) else { return nil }
                self = .percent(value)
            } else {
                guard let value = Int(text), value >= 0 else { return nil }
                self = .rows(value)
            }
        }

        public var description: String {
            switch self {
            case .rows(let count): "\(count)"
            case .percent(let value): value == value.rounded() ? "\(Int(value))%" : "\(value)%"
            }
        }

        /// Why removing `removed` of `cached` rows is held, or nil when it may go ahead.
        public func refusal(removing removed: Int, of cached: Int, noun: String) -> String? {
            guard removed > 0 else { return nil }
            let allowed: Int
            switch self {
            case .rows(let count): allowed = count
            case .percent(let value):
                if value >= 100 { return nil }
                allowed = max(1, Int((Double(cached) * value / 100).rounded(.down)))
            }
            if removed == cached && removed > 0 {
                return "would remove all \(cached) cached \(noun) (only a limit of 100% allows emptying the cache)"
            }
            guard removed > allowed else { return nil }
            return "would remove \(removed) of \(cached) cached \(noun) (more than the \(self) this source allows)"
        }
    }
}

/// The engine's name for it; an app sees `Source.RemovalLimit`.
package typealias RemovalLimit = Source.RemovalLimit
