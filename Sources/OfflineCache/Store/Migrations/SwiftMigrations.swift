extension Migrator {
    /// The migrations written in Swift, beside the SQL files under `Migrations/`; ids are one
    /// sequence across both.
    package static let swiftMigrations: [Migration] = [
        Migration(id: 11, file: "0011_kinds_without_checks.swift", change: .swift(dropKindChecks)),
        Migration(id: 12, file: "0012_held_runs.swift", change: .swift(heldRuns)),
        // The rows cached before full-text search came (migration 18 made its tables) are indexed.
        Migration(id: 19, file: "0019_search_existing_rows.swift", change: .rebuild(.searchIndex)),
    ]

    /// A sync the removal guard held is its own outcome, `held`, not `failed`: it needs a person,
    /// not waiting. Rebuilds `sync_runs` for its CHECK (run ids keep their sequence), and turns
    /// the held runs recorded as failures (their error starts `held:`) into held ones.
    static func heldRuns(_ db: Connection) throws {
        try TableRebuild(db: db, table: "sync_runs", definition: """
            CREATE TABLE sync_runs (
                id          INTEGER PRIMARY KEY AUTOINCREMENT,
                source      TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
                started_at  TEXT NOT NULL,
                finished_at TEXT NOT NULL,
                outcome     TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged', 'failed', 'held', 'skipped')),
                inserted    INTEGER NOT NULL DEFAULT 0,
                updated     INTEGER NOT NULL DEFAULT 0,
                deleted     INTEGER NOT NULL DEFAULT 0,
                http_status INTEGER,
                bytes       INTEGER,
                error       TEXT,
                note        TEXT,
                attempts    INTEGER NOT NULL DEFAULT 0
            ) STRICT
            """, indexes: [
                "CREATE INDEX sync_runs_by_source ON sync_runs (source, id)",
                "CREATE INDEX sync_runs_by_time ON sync_runs (finished_at)",
            ]).run()
        try db.execute("UPDATE sync_runs SET outcome = 'held' WHERE outcome = 'failed' AND error LIKE 'held:%'")
        try db.execute("UPDATE sync_state SET last_outcome = 'held' WHERE last_outcome = 'failed' AND last_error LIKE 'held:%'")
    }

    /// The kinds of source live in Swift (`SourceKind`): the tables stop listing them in CHECKs,
    /// so a new kind needs no migration. Rebuilds `sources`, `changes` and `loads`; `sources`
    /// gains `delimiter`, a csv source's field separator.
    static func dropKindChecks(_ db: Connection) throws {
        try TableRebuild(db: db, table: "sources", definition: """
            CREATE TABLE sources (
                name          TEXT PRIMARY KEY,
                kind          TEXT NOT NULL,
                url           TEXT NOT NULL,
                mode          TEXT NOT NULL CHECK (mode IN ('replace', 'merge')),
                ttl_s         INTEGER NOT NULL CHECK (ttl_s > 0),
                headers       TEXT NOT NULL DEFAULT '[]',  -- JSON array of "Name: value" strings
                token_env     TEXT,                        -- the variable's name; its value is never stored
                max_bytes     INTEGER,
                created_at    TEXT NOT NULL,
                ca_cert       TEXT,
                max_delete    TEXT,
                alert_after_s INTEGER CHECK (alert_after_s > 0),
                rows_path     TEXT,
                key_fields    TEXT,
                next_page     TEXT,
                next_param    TEXT,
                max_pages     INTEGER CHECK (max_pages > 0),
                delimiter     TEXT
            ) STRICT
            """).run()
        try TableRebuild(db: db, table: "changes", definition: """
            CREATE TABLE changes (
                id       INTEGER PRIMARY KEY,
                run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
                source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
                row_kind TEXT NOT NULL,
                row_id   TEXT NOT NULL,
                change   TEXT NOT NULL CHECK (change IN ('inserted', 'updated', 'removed')),
                before   TEXT,  -- JSON of the row's fields before (updated, removed)
                after    TEXT   -- JSON of the row's fields after (inserted, updated)
            ) STRICT
            """, indexes: [
                "CREATE INDEX changes_by_run ON changes (run_id)",
                "CREATE INDEX changes_by_source ON changes (source, id)",
            ]).run()
        try TableRebuild(db: db, table: "loads", definition: """
            CREATE TABLE loads (
                run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
                source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
                row_kind TEXT NOT NULL,
                rows     INTEGER NOT NULL,
                PRIMARY KEY (run_id, row_kind)
            ) STRICT
            """, indexes: ["CREATE INDEX loads_by_source ON loads (source, run_id)"]).run()
    }
}

/// SQLite's procedure for a change ALTER TABLE cannot make (a CHECK, a constraint): a new table
/// under a temporary name, every row copied with its rowid (a source's identity includes it),
/// the old table dropped, the new one renamed, its indexes made again. Run inside the
/// migration's transaction, with foreign keys off (see `Migrator`). The old table's triggers go
/// with it: a rebuild of `sync_runs` must make `run_totals`' triggers again (migration 13).
struct TableRebuild {
    let db: Connection
    let table: String
    /// `CREATE TABLE <table> (…)`: the table as it is to be.
    let definition: String
    var indexes: [String] = []

    func run() throws {
        let temporary = table + "_rebuilt"
        guard let open = definition.firstIndex(of: "(") else {
            throw DatabaseError(extendedCode: 1, message: "a table definition without columns: \(table)")
        }
        try db.execute("CREATE TABLE \(RecordView.quoted(temporary)) " + definition[open...])
        func columns(_ name: String) throws -> [String] {
            try db.query("SELECT name FROM pragma_table_info(?)", [.text(name)]) { $0.text(0) ?? "" }
        }
        let kept = Set(try columns(table))
        let copied = try columns(temporary).filter(kept.contains).map(RecordView.quoted).joined(separator: ", ")
        let withoutRowID = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'",
                                            [.text(table)]) == 1
        let rowid = withoutRowID ? "" : "rowid, "
        try db.execute("INSERT INTO \(RecordView.quoted(temporary)) (\(rowid)\(copied)) SELECT \(rowid)\(copied) FROM \(RecordView.quoted(table))")
        // An AUTOINCREMENT table's sequence goes with it when it is dropped: carry it over, so
        // ids never repeat (the newest rows may be gone).
        let hasSequences = try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'") == 1
        let sequence = hasSequences ? try db.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(table)]) : nil
        try db.execute("DROP TABLE \(RecordView.quoted(table))")
        try db.execute("ALTER TABLE \(RecordView.quoted(temporary)) RENAME TO \(RecordView.quoted(table))")
        if let sequence {
            try db.run("DELETE FROM sqlite_sequence WHERE name = ?", [.text(table)])
            try db.run("INSERT INTO sqlite_sequence (name, seq) SELECT ?1, max(?2, coalesce(max(rowid), 0)) FROM \(RecordView.quoted(table))",
                       [.text(table), .int(Int64(sequence))])
        }
        for index in indexes { try db.execute(index) }
    }
}
