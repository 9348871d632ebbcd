import Testing
@testable import OfflineCache

/// The radix sort that puts a random-order response in table order, held to the standard
/// library's stable sort: the same order, ties kept in their first order, on keys of every width.
@Suite struct RadixSortTests {
    struct Item: Equatable {
        let key: UInt64
        let position: Int
    }

    @Test(arguments: [1, 3, 12, 13, 24, 37, 64])
    func itSortsAsTheStableSortDoes(bits: Int) {
        var generator = SplitMix64(seed: UInt64(bits))
        let mask = bits == 64 ? UInt64.max : (1 << UInt64(bits)) - 1
        // Few distinct keys at one end, so ties are common; any key at the other.
        let distinct = [UInt64.random(in: 0...mask, using: &generator), UInt64.random(in: 0...mask, using: &generator), mask, 0]
        var items = (0..<5_000).map { position in
            Item(key: position % 3 == 0 ? distinct.randomElement(using: &generator)! : UInt64.random(in: 0...mask, using: &generator),
                 position: position)
        }
        let expected = items.sorted { $0.key < $1.key }  // stable: ties stay by position
        RadixSort.sort(&items, bits: bits, by: \.key)
        #expect(items == expected)
    }

    @Test func sortingByAMinorKeyThenAMajorOneOrdersByBoth() {
        var generator = SplitMix64(seed: 7)
        var pairs = (0..<3_000).map { _ in (major: UInt64.random(in: 0..<50, using: &generator), minor: UInt64.random(in: 0..<9, using: &generator)) }
        let expected = pairs.sorted { ($0.major, $0.minor) < ($1.major, $1.minor) }
        RadixSort.sort(&pairs, bits: RadixSort.bitWidth(8), by: \.minor)
        RadixSort.sort(&pairs, bits: RadixSort.bitWidth(49), by: \.major)
        #expect(pairs.map(\.major) == expected.map(\.major) && pairs.map(\.minor) == expected.map(\.minor))
    }

    @Test func oneValueOrNoneIsLeftAsItIs() {
        var none: [UInt64] = []
        RadixSort.sort(&none, bits: 64, by: { $0 })
        #expect(none.isEmpty)
        var one: [UInt64] = [42]
        RadixSort.sort(&one, bits: 64, by: { $0 })
        #expect(one == [42])
        #expect(RadixSort.bitWidth(0) == 0 && RadixSort.bitWidth(1) == 1 && RadixSort.bitWidth(4095) == 12 && RadixSort.bitWidth(.max) == 64)
    }
}
