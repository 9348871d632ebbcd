-- Generic JSON sources (kind 'json'): where the records are in a response (rows_path, such as
-- '$.results'), which fields identify a record (key_fields, comma separated dot paths), how to
-- find the next page (next_page: 'link' for Link headers, or a JSON path in the body, with
-- next_param when that value is a cursor for a query parameter) and at most how many pages.
-- The kind and row-kind CHECKs change, so sources, changes and loads are rebuilt (foreign keys
-- are off around a migration; the views that read them are dropped before and made after).

CREATE TABLE sources_new (
    name          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('account', 'jokes', 'json')),
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
    max_pages     INTEGER CHECK (max_pages > 0)
) STRICT;
INSERT INTO sources_new (rowid, name, kind, url, mode, ttl_s, headers, token_env, max_bytes, created_at, ca_cert, max_delete, alert_after_s)
    SELECT rowid, name, kind, url, mode, ttl_s, headers, token_env, max_bytes, created_at, ca_cert, max_delete, alert_after_s FROM sources;
DROP TABLE sources;
ALTER TABLE sources_new RENAME TO sources;

CREATE TABLE changes_new (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    row_kind TEXT NOT NULL CHECK (row_kind IN ('account', 'transaction', 'joke', 'record')),
    row_id   TEXT NOT NULL,
    change   TEXT NOT NULL CHECK (change IN ('inserted', 'updated', 'removed')),
    before   TEXT,  -- JSON of the row's fields before (updated, removed)
    after    TEXT   -- JSON of the row's fields after (inserted, updated)
) STRICT;
INSERT INTO changes_new SELECT id, run_id, source, row_kind, row_id, change, before, after FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
CREATE INDEX changes_by_run ON changes (run_id);
CREATE INDEX changes_by_source ON changes (source, id);

CREATE TABLE loads_new (
    run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    row_kind TEXT NOT NULL CHECK (row_kind IN ('transaction', 'joke', 'record')),
    rows     INTEGER NOT NULL,
    PRIMARY KEY (run_id, row_kind)
) STRICT;
INSERT INTO loads_new SELECT run_id, source, row_kind, rows FROM loads;
DROP TABLE loads;
ALTER TABLE loads_new RENAME TO loads;
CREATE INDEX loads_by_source ON loads (source, run_id);

-- One table for every generic record: its key (the key fields' values: the value itself for one
-- field, a JSON array for several), the record as canonical JSON (keys sorted, no whitespace:
-- a reordered or reformatted record is the same record) and when upstream last sent it.
CREATE TABLE records (
    source  TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    record  TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;

-- The top-level scalar fields seen in each source's records, in the order first seen: the
-- columns of its view, cached_NAME, which a sync makes again when it sees a new one.
CREATE TABLE record_fields (
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name     TEXT NOT NULL,
    PRIMARY KEY (source, name)
) STRICT;

-- Each generic source's view name: cached_NAME, unless SQLite (which compares names without
-- case) has that name already; then cached_NAME_json, cached_NAME_json2, ...
CREATE TABLE record_views (
    source TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    view   TEXT NOT NULL UNIQUE COLLATE NOCASE
) STRICT;
