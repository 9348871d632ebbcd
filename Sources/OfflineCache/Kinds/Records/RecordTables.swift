import FoundationEssentials

/// Reading the pages of a json or csv source into one record set.
enum RecordTables {
    /// The records of every page, checked and keyed, with each page read by `page`.
    static func set(_ bodies: inout [Data], _ page: (Data, Int) throws(UpstreamError) -> RecordPage) throws(UpstreamError) -> RecordSet {
        var set = RecordSet()
        for number in bodies.indices {
            // Each body goes once read: memory holds one copy of the data. Taken out of the
            // list first, so `page` holds the only copy and may give it back as it reads.
            let body = bodies[number]
            bodies[number] = Data()
            set.add(try page(body, number + 1), number: number + 1)
        }
        try set.finish()
        return set
    }
}
