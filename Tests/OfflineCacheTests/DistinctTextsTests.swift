import Testing
@testable import OfflineCache

/// The numbering of distinct vendors that a random-order load ranks: by bytes, first seen first.
@Suite struct DistinctTextsTests {
    @Test func textsAreNumberedByTheirBytesInTheOrderFirstSeen() {
        var distinct = DistinctTexts()
        // "é" precomposed and decomposed are one String to Swift's ==, two texts to SQLite.
        let texts = ["Rent", "\u{E9}clair", "e\u{301}clair", "", "Rent", "rent", "", "\u{E9}clair", String(repeating: "long ", count: 40)]
        #expect(texts.map { distinct.number($0) } == [0, 1, 2, 3, 0, 4, 3, 1, 5])
        #expect(distinct.texts.map { Array($0.utf8) } == [0, 1, 2, 3, 5, 8].map { Array(texts[$0].utf8) })
    }

    @Test func manyTextsKeepTheirNumbersAsTheTableGrows() {
        var distinct = DistinctTexts()
        let texts = (0..<5_000).map { "Vendor \($0) Co" }
        #expect(texts.map { distinct.number($0) } == (0..<5_000).map { UInt32($0) })
        #expect(texts.reversed().map { distinct.number($0) } == (0..<5_000).reversed().map { UInt32($0) })
        #expect(distinct.texts == texts)
    }
}
