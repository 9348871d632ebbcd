import Foundation
import Testing
@testable import OfflineCache

@Suite(.computing) struct BackoffTests {
    @Test func delaysGrowExponentiallyUpToTheCapWithFullJitter() {
        let backoff = Backoff(base: 30, cap: 3600)
        #expect(backoff.delay(afterFailures: 1, random: 1) == 30)
        #expect(backoff.delay(afterFailures: 3, random: 1) == 120)
        #expect(backoff.delay(afterFailures: 20, random: 1) == 3600)
        #expect(backoff.delay(afterFailures: 3, random: 0.5) == 60)
        // Full jitter, above a floor of half the base so cron never asks again at once.
        #expect(backoff.delay(afterFailures: 5, random: 0) == 15)
        for _ in 0..<100 {
            let delay = backoff.delay(afterFailures: 4)
            #expect(delay >= 15 && delay <= 240)
        }
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_796_004_000)  // Mon, 30 Nov 2026 02:00:00 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds("Mon, 30 Nov 2026 02:01:30 GMT", now: now) == 90)
        #expect(RetryAfter.seconds("Mon, 30 Nov 2026 01:00:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        // Values that once trapped converting to Int64, and far-future ones: clamped, never a crash.
        for huge in ["9223372036854775", "9223372036854775807", "99999999999", String(repeating: "9", count: 400)] {
            #expect(RetryAfter.seconds(huge, now: now) == RetryAfter.longest, "\(huge)")
        }
        for refused in ["inf", "1e300", "nan", "+5", "12.5", ""] {
            #expect(RetryAfter.seconds(refused, now: now) == nil, "\(refused)")
        }
        #expect(RetryAfter.seconds("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == RetryAfter.longest)
    }

    @Test func onlyWhatCanSucceedLaterIsRetryable() {
        #expect(UpstreamError.httpStatus(503, url: "u").isRetryable)
        #expect(UpstreamError.httpStatus(429, url: "u").isRetryable)
        #expect(UpstreamError.httpStatus(408, url: "u").isRetryable)
        #expect(UpstreamError.truncated(url: "u", received: 1, expected: 2).isRetryable)
        #expect(UpstreamError.timedOut(url: "u", seconds: 1).isRetryable)
        #expect(!UpstreamError.httpStatus(404, url: "u").isRetryable)
        #expect(!UpstreamError.httpStatus(401, url: "u").isRetryable)
        #expect(!UpstreamError.badData("x").isRetryable)
        #expect(!UpstreamError.envelope(status: 500, message: "m").isRetryable)
    }

    @Test func theBodyHashTellsEveryOneByteChangeApart() {
        var generator = SplitMix64(seed: 11)
        let body = Data((0..<1_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let original = BodyHash.of(body)
        #expect(BodyHash.of(body) == original)
        #expect(original.hasSuffix("-1000"))
        // A flipped bit at every position: in every lane, in the tail, at both ends.
        var seen: Set<String> = [original]
        for position in body.indices {
            var changed = body
            changed[position] ^= 1 << UInt8(position % 8)
            seen.insert(BodyHash.of(changed))
        }
        #expect(seen.count == body.count + 1)
        // Lengths apart, and bodies that differ only by moving a word between lanes.
        #expect(BodyHash.of(body.prefix(999)) != BodyHash.of(body.prefix(998)))
        #expect(BodyHash.of(Data(repeating: 0, count: 64)) != BodyHash.of(Data(repeating: 0, count: 32) + Data([1]) + Data(repeating: 0, count: 31)))
    }
}
