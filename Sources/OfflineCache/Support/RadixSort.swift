/// A stable least-significant-digit radix sort on an unsigned key, 12 bits a pass.
///
/// A million rows sort in a few passes over memory, each a count and a scatter, where a
/// comparison sort's merges cost several times as much. Being stable, sorting by a minor key
/// first and then by a major one gives the order of both, ties kept in their first order.
enum RadixSort {
    private static let digitBits = 12
    private static let buckets = 1 << digitBits

    /// Sorts `values` by `key(value)`, of which only the low `bits` bits may be set. A pass in
    /// which every value has the same digit moves nothing.
    static func sort<Value>(_ values: inout [Value], bits: Int, by key: (Value) -> UInt64) {
        guard values.count > 1, bits > 0 else { return }
        var spare = values
        var counts = [Int](repeating: 0, count: buckets)
        var shift = 0
        while shift < bits {
            for index in counts.indices { counts[index] = 0 }
            let mask = UInt64(buckets - 1)
            for value in values { counts[Int((key(value) >> UInt64(shift)) & mask)] += 1 }
            if !counts.contains(values.count) {
                // Where each digit's run starts, then every value into its place, in order.
                var start = 0
                for digit in counts.indices {
                    let count = counts[digit]
                    counts[digit] = start
                    start += count
                }
                values.withUnsafeBufferPointer { source in
                    spare.withUnsafeMutableBufferPointer { target in
                        for value in source {
                            let digit = Int((key(value) >> UInt64(shift)) & mask)
                            target[counts[digit]] = value
                            counts[digit] += 1
                        }
                    }
                }
                swap(&values, &spare)
            }
            shift += digitBits
        }
    }

    /// How many low bits it takes to hold `value`.
    static func bitWidth(_ value: UInt64) -> Int { UInt64.bitWidth - value.leadingZeroBitCount }
}
