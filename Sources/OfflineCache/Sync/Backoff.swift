import FoundationEssentials

/// Exponential backoff with full jitter: a random delay between a floor and an exponentially
/// growing, capped ceiling. Jitter spreads out the retries of many clients that failed together.
package struct Backoff: Sendable {
    /// The ceiling of the first delay, and the least any delay may be.
    package var base: Double
    package var cap: Double

    package init(base: Double, cap: Double) {
        self.base = base
        self.cap = cap
    }

    /// Retries inside one sync: short, so a run from cron finishes in seconds.
    package static let retry = Backoff(base: 0.5, cap: 8)
    /// Between syncs after failures: what `sync --if-stale` (cron) waits before asking again.
    package static let betweenSyncs = Backoff(base: 30, cap: 3600)

    /// The delay before try `n + 1` after `n` failures (n ≥ 1).
    package func delay(afterFailures n: Int, random: Double = Double.random(in: 0...1)) -> Double {
        let ceiling = min(cap, base * Double(sign: .plus, exponent: max(n, 1) - 1, significand: 1))
        return max(base / 2, ceiling * random)
    }
}

/// A stable 64-bit hash of a body, to tell an identical response without reconciling it.
///
/// Four lanes over 8-byte words (multiply, rotate, multiply), folded and mixed at the end; the
/// last few bytes go through FNV-1a. Much faster than FNV-1a over every byte (figures:
/// docs/performance.md), and enough to tell "the same body again": it is not a defence against a
/// server that wants to collide, which could send the old body anyway.
package enum BodyHash {
    package static func of(_ data: Data) -> String {
        let p1: UInt64 = 0x9E37_79B1_85EB_CA87, p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        var a = p1 &+ p2, b = p2, c: UInt64 = 0, d = 0 &- p1
        func round(_ lane: inout UInt64, _ word: UInt64) {
            let mixed = lane &+ word &* p2
            lane = ((mixed << 31) | (mixed >> 33)) &* p1
        }
        var tail: UInt64 = 0xcbf2_9ce4_8422_2325
        data.withUnsafeBytes { raw in
            let stripes = raw.count / 32
            for stripe in 0..<stripes {
                let offset = stripe * 32
                round(&a, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                round(&b, raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                round(&c, raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                round(&d, raw.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
            }
            for byte in raw[(stripes * 32)...] {
                tail ^= UInt64(byte)
                tail &*= 0x0000_0100_0000_01B3
            }
        }
        var hash = UInt64(truncatingIfNeeded: data.count) &* p1 ^ tail
        for (index, lane) in [a, b, c, d].enumerated() {
            let rotated = (lane << UInt64(index * 7 + 1)) | (lane >> UInt64(63 - index * 7))
            hash = (hash ^ rotated) &* p2
        }
        // A final avalanche, so every input bit reaches every output bit.
        hash ^= hash >> 33; hash &*= p1; hash ^= hash >> 29; hash &*= p2; hash ^= hash >> 32
        return TransactionID.hex(hash) + "-\(data.count)"
    }
}
