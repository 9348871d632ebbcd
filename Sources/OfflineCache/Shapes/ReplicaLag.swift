import FoundationEssentials

/// How far behind its primary this cache is: a primary is behind nothing; a read-only follower
/// is behind by the age of the newest heartbeat it holds (unknown before one arrives).
package enum ReplicaLag: Equatable, Sendable {
    case primary
    case unknown
    case behind(seconds: Double)

    /// `database`'s lag: a writable cache is a primary.
    package static func of(_ database: CacheDatabase?, readOnly: Bool) -> ReplicaLag {
        guard readOnly, let database else { return .primary }
        return (try? Heartbeat(database).lagSeconds()).flatMap { $0 }.map { .behind(seconds: $0) } ?? .unknown
    }

    /// Of several files' lags (sources sharded over primaries), the one a bound is checked
    /// against: unknown when any is, else the largest.
    package static func worst(_ lags: [ReplicaLag]) -> ReplicaLag {
        lags.contains(.unknown) ? .unknown : lags.compactMap(\.seconds).max().map { .behind(seconds: $0) } ?? .primary
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

    /// Whether it is within `maxLag` seconds: a primary always is; an unknown lag never.
    package func isWithin(_ maxLag: Int) -> Bool {
        switch self {
        case .primary: true
        case .unknown: false
        case .behind(let seconds): seconds <= Double(maxLag)
        }
    }
}
