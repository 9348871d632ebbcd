import Foundation

/// Exponential backoff with full jitter: a random delay between a floor and an exponentially
/// growing, capped ceiling. Jitter spreads out the retries of many clients that failed together.
public struct Backoff: Sendable {
    /// The ceiling of the first delay, and the least any delay may be.
    public var base: Double
    public var cap: Double

    public init(base: Double, cap: Double) {
        self.base = base
        self.cap = cap
    }

    /// Retries inside one sync: short, so a run from cron finishes in seconds.
    public static let retry = Backoff(base: 0.5, cap: 8)
    /// Between syncs after failures: what `sync --if-stale` (cron) waits before asking again.
    public static let betweenSyncs = Backoff(base: 30, cap: 3600)

    /// The delay before try `n + 1` after `n` failures (n ≥ 1).
    public func delay(afterFailures n: Int, random: Double = Double.random(in: 0...1)) -> Double {
        let ceiling = min(cap, base * pow(2, Double(max(n, 1) - 1)))
        return max(base / 2, ceiling * random)
    }
}

/// A stable 64-bit FNV-1a hash of a body, to tell an identical response without reconciling it.
enum BodyHash {
    static func of(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { buffer in
            for byte in buffer {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "-\(data.count)"
    }
}
