-- The change log: every row a reconcile inserted, updated (with the fields before and after)
-- or removed, tied to its run. `cache diff` prints it; `cache prune` trims it with the runs.
CREATE TABLE changes (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    row_kind TEXT NOT NULL CHECK (row_kind IN ('account', 'transaction', 'joke')),
    row_id   TEXT NOT NULL,
    change   TEXT NOT NULL CHECK (change IN ('inserted', 'updated', 'removed')),
    before   TEXT,  -- JSON of the row's fields before (updated, removed)
    after    TEXT   -- JSON of the row's fields after (inserted, updated)
) STRICT;
CREATE INDEX changes_by_run ON changes (run_id);
CREATE INDEX changes_by_source ON changes (source, id);
CREATE INDEX sync_runs_by_time ON sync_runs (finished_at);
