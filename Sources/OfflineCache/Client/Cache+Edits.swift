import FoundationEssentials

/// Local edits from an app: change a record offline, show it at once, push it when the upstream
/// answers (`LocalEdit`). The same outbox `cache edit`, `cache push` and `cache serve`'s write
/// routes use, in the same file.
extension Cache {
    /// Queues `change` of the record `key` of the source `name` (nil `key` for a new record the
    /// upstream numbers), and shows it at once: the record's rows are `isPending` until it
    /// applies. Never waits for the network.
    ///
    /// ```swift
    /// let edit = try cache.edit("tasks", key: "7", .patch(#"{"done": true}"#))
    /// ```
    ///
    /// - Throws: `CacheError.refusedEdit` for a source that cannot be written (no
    ///   `writeURL`, a kind that keeps no records), a body that is not one JSON object, an edit
    ///   of the key or past the size limit; `.noSuchRow` for a record not cached; `.readOnly`.
    public func edit(_ name: String, key: String?, _ change: LocalEdit.Change) throws(CacheError) -> LocalEdit {
        if readOnly { _ = try writable() }  // refused, as every call that writes
        // On the connection this cache keeps for edits: an app queues them as its user types,
        // and opening the file each time (its schema checked, its views compared) costs more
        // than the edit.
        return try editor.with(path: path) { database throws(CacheError) in
            let source = try SourceStore(database).named(name)
            return try OutboxStore(database).queue(change, source: source, key: key)
        }
    }

    /// Queues many edits of the source `name` at once, in order, in one transaction: all of
    /// them, or none when one is refused (a refusal says which, by its place and key; a record
    /// not cached is `noSuchRow`, naming its key). Each is what `edit(_:key:_:)` queues, and
    /// shows at once; one commit writes them all, so an app importing a list of changes, or
    /// marking many rows at once, waits once, not per edit.
    ///
    /// ```swift
    /// let done = try cache.edit("tasks", [("7", .patch(#"{"done": true}"#)), ("8", .delete)])
    /// ```
    ///
    /// - Throws: what `edit(_:key:_:)` throws, for the first edit refused.
    public func edit(_ name: String, _ edits: [(key: String?, change: LocalEdit.Change)]) throws(CacheError) -> [LocalEdit] {
        if readOnly { _ = try writable() }
        return try editor.with(path: path) { database throws(CacheError) in
            let source = try SourceStore(database).named(name)
            return try OutboxStore(database).queue(edits, source: source)
        }
    }

    /// Sends the queued edits of the sources named (default: every source) now, and returns the
    /// edits sent, each in the state its answer left it: `applied`, `conflict`, `rejected`, or
    /// `queued` again after a failure that may pass (its `answerStatus` says which: 401 or 403
    /// stops the source's push).
    public func push(_ names: String...) throws(CacheError) -> [LocalEdit] {
        try typed {
            let database = try writable()
            let store = SourceStore(database)
            let sources = try names.isEmpty ? store.all() : names.map { name throws(CacheError) in try store.named(name) }
            let path = path
            let report = try Pusher(open: { try CacheDatabase(path: path, access: .write) }, fetcher: fetcher, environment: environment).push(sources)
            let outbox = OutboxStore(database)
            return try report.sent.map { id throws(CacheError) in try outbox.edit(id) }
        }
    }

    /// The edits not yet applied (with `all`, every edit), oldest first; of the sources named, or
    /// of every source.
    public func outbox(of names: [String] = [], all: Bool = false) throws(CacheError) -> [LocalEdit] {
        try typed {
            try OutboxStore(database()).edits(of: names, all: all)
        }
    }
}
