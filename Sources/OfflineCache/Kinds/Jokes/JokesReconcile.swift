/// The jokes' reconcile: by id, against the cached jokes read in the same transaction.
extension Reconciler {
    private static func fields(_ joke: UpstreamJoke) -> JSONValue {
        .object([("id", .int(joke.id)), ("type", .string(joke.type)), ("setup", .string(joke.setup)), ("punchline", .string(joke.punchline))])
    }

    func applyJokes(_ jokes: [UpstreamJoke]) throws -> ChangeCounts {
        let name = SQLValue.text(source.name)
        var existing: [Int: UpstreamJoke] = [:]
        for joke in try db.query("SELECT id, type, setup, punchline FROM jokes WHERE source = ?", [name], row: {
            UpstreamJoke(id: $0.int(0), type: $0.text(1) ?? "", setup: $0.text(2) ?? "", punchline: $0.text(3) ?? "")
        }) {
            existing[joke.id] = joke
        }

        var counts = ChangeCounts()
        var present = Set<Int>()
        // Into an empty cache every joke is new: logged as one load, not joke by joke.
        let loading = existing.isEmpty
        for joke in jokes where present.insert(joke.id).inserted {
            if let before = existing[joke.id] {
                if before != joke {
                    try db.run("UPDATE jokes SET type = ?, setup = ?, punchline = ?, seen_at = ? WHERE source = ? AND id = ?",
                               [.text(joke.type), .text(joke.setup), .text(joke.punchline), .text(now), name, .int(joke.id)])
                    try log("joke", String(joke.id), "updated", before: Self.fields(before), after: Self.fields(joke))
                    counts.updated += 1
                } else if merging {
                    try db.run("UPDATE jokes SET seen_at = ? WHERE source = ? AND id = ?", [.text(now), name, .int(joke.id)])
                }
            } else {
                try db.run("""
                    INSERT INTO jokes (source, id, type, setup, punchline, seen_at) VALUES (?, ?, ?, ?, ?, ?)
                    """, [name, .int(joke.id), .text(joke.type), .text(joke.setup), .text(joke.punchline), .text(now)])
                if !loading { try log("joke", String(joke.id), "inserted", before: nil, after: Self.fields(joke)) }
                counts.inserted += 1
            }
        }
        if loading { try logLoad(kind: "joke", rows: counts.inserted) }
        if !merging {
            for (id, before) in existing where !present.contains(id) {
                try db.run("DELETE FROM jokes WHERE source = ? AND id = ?", [name, .int(id)])
                try log("joke", String(id), "removed", before: Self.fields(before), after: nil)
                counts.deleted += 1
            }
        }
        return counts
    }
}
