import FoundationEssentials

/// Reading the pages of a json or csv source into one record set.
enum RecordTables {
    /// The records of every page, checked and keyed, with each page read by `page`.
    static func set(_ bodies: inout [Data], _ page: (Data, Int) throws(UpstreamError) -> RecordPage) throws(UpstreamError) -> RecordSet {
        var set = RecordSet()
        for number in bodies.indices {
            set.add(try page(bodies[number], number + 1), number: number + 1)
            bodies[number] = Data()  // each body goes once read: memory holds one copy of the data
        }
        try set.finish()
        return set
    }
}
