import FoundationEssentials

/// How far behind its primary this cache is: a primary is behind nothing; a read-only follower
/// is behind by the age of the newest heartbeat it holds (unknown before one arrives). A
/// heartbeat stamped in this machine's future is no measure at all: a primary whose clock runs
/// ahead would read as 0 s behind for as long as it runs ahead (for ever, stamped 2099), whether
/// or not replication goes on, so it is a failure that names the skew.
package enum ReplicaLag: Equatable, Sendable {
    case primary
    case unknown
    case behind(seconds: Double)
    /// The newest heartbeat is stamped this many seconds past this machine's clock.
    case ahead(seconds: Double)

    /// How far ahead a heartbeat may be stamped before the clocks are said to disagree: two
    /// machines' clocks under NTP differ by milliseconds; a second or two of stamp-to-copy slop.
    package static let clockTolerance = 5.0

    /// `database`'s lag at `now`: a writable cache is a primary.
    package static func of(_ database: CacheDatabase?, readOnly: Bool, now: Date = Date()) -> ReplicaLag {
        guard readOnly, let database else { return .primary }
        return measured((try? Heartbeat(database).lagSeconds(now: now)).flatMap { $0 })
    }

    /// The lag a heartbeat's age gives (nil: none yet); an age below `-clockTolerance` is a
    /// heartbeat from the future.
    package static func measured(_ age: Double?) -> ReplicaLag {
        guard let age else { return .unknown }
        return age < -clockTolerance ? .ahead(seconds: -age) : .behind(seconds: max(0, age))
    }

    /// Of several files' lags (sources sharded over primaries), the one a bound is checked
    /// against: a clock ahead first (nothing about it can be known), then unknown, else the largest.
    package static func worst(_ lags: [ReplicaLag]) -> ReplicaLag {
        if let ahead = lags.first(where: { if case .ahead = $0 { true } else { false } }) { return ahead }
        return lags.contains(.unknown) ? .unknown : lags.compactMap(\.seconds).max().map { .behind(seconds: $0) } ?? .primary
    }

    /// The sentence that says the primary's clock is ahead, and by how much; nil otherwise.
    package var skew: String? {
        guard case .ahead(let seconds) = self else { return nil }
        return "its primary's newest heartbeat is stamped \(DurationText.age(Int(seconds.rounded()))) ahead of this machine's clock: "
            + "one of the two clocks is wrong, so how far behind it is cannot be known (set the clocks right, e.g. with NTP)"
    }

    package var seconds: Double? {
        if case .behind(let seconds) = self { return seconds }
        return nil
    }

    /// `replica_lag_s` as the JSON answers give it: whole seconds, null when unknown; nil (no
    /// key at all) on a primary.
    package var json: JSONValue? {
        self == .primary ? nil : .optional(seconds.map { Int($0) })
    }

    /// Whether it is within `maxLag` seconds: a primary always is; an unknown lag, or one
    /// measured by a clock ahead, never.
    package func isWithin(_ maxLag: Int) -> Bool {
        switch self {
        case .primary: true
        case .unknown, .ahead: false
        case .behind(let seconds): seconds <= Double(maxLag)
        }
    }
}
