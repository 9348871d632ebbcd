-- Run ids never repeat, even after the newest runs went with their source: a remembered
-- `cache diff --run 3` must not come to mean another source's run. AUTOINCREMENT needs the table
-- rebuilt (foreign keys are off around a migration, so the change log keeps its rows).
CREATE TABLE sync_runs_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    source      TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged', 'failed', 'skipped')),
    inserted    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    deleted     INTEGER NOT NULL DEFAULT 0,
    http_status INTEGER,
    bytes       INTEGER,
    error       TEXT,
    note        TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO sync_runs_new (id, source, started_at, finished_at, outcome, inserted, updated, deleted,
                           http_status, bytes, error, note, attempts)
    SELECT id, source, started_at, finished_at, outcome, inserted, updated, deleted,
           http_status, bytes, error, note, attempts FROM sync_runs;
DROP TABLE sync_runs;
ALTER TABLE sync_runs_new RENAME TO sync_runs;
CREATE INDEX sync_runs_by_source ON sync_runs (source, id);
CREATE INDEX sync_runs_by_time ON sync_runs (finished_at);
