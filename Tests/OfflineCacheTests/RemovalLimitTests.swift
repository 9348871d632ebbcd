import Testing
@testable import OfflineCache

@Suite(.computing) struct RemovalLimitTests {
    @Test func limitsParseAndPrint() {
        #expect(RemovalLimit("50%") == .percent(50))
        #expect(RemovalLimit("12.5%") == .percent(12.5))
        #expect(RemovalLimit("20") == .rows(20))
        for bad in ["", "%", "-1", "101%", "abc", "5 %", "inf%", "nan%"] { #expect(RemovalLimit(bad) == nil, "\(bad)") }
        #expect(RemovalLimit.percent(50).description == "50%" && RemovalLimit.rows(3).description == "3")
    }

    @Test func aPercentageHoldsLargeRemovalsAndNeverEmptiesTheCache() {
        let half = RemovalLimit.default
        #expect(half.refusal(removing: 0, of: 130, noun: "transactions") == nil)
        #expect(half.refusal(removing: 65, of: 130, noun: "transactions") == nil)
        #expect(half.refusal(removing: 120, of: 130, noun: "transactions")
                == "would remove 120 of 130 cached transactions (more than the 50% this source allows)")
        // Small caches: at least one row may go, but never all of them.
        #expect(half.refusal(removing: 1, of: 3, noun: "jokes") == nil)
        #expect(half.refusal(removing: 2, of: 3, noun: "jokes") != nil)
        #expect(half.refusal(removing: 1, of: 2, noun: "jokes") == nil)
        #expect(half.refusal(removing: 1, of: 1, noun: "jokes")?.contains("would remove all 1 cached jokes") == true)
        #expect(RemovalLimit.percent(100).refusal(removing: 130, of: 130, noun: "transactions") == nil)
    }

    @Test func aRowCountHoldsPastItAndNeverEmptiesTheCache() {
        let five = RemovalLimit.rows(5)
        #expect(five.refusal(removing: 5, of: 100, noun: "transactions") == nil)
        #expect(five.refusal(removing: 6, of: 100, noun: "transactions")
                == "would remove 6 of 100 cached transactions (more than the 5 this source allows)")
        #expect(five.refusal(removing: 4, of: 4, noun: "transactions") != nil)
        #expect(RemovalLimit.rows(0).refusal(removing: 1, of: 100, noun: "transactions") != nil)
    }
}
