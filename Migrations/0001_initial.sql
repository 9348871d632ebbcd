-- The first schema of cache: sources, their sync bookkeeping and the cached rows. (The views
-- that compute each row's staleness at query time are not made by migrations: see
-- DerivedViews in the Swift sources.)
-- Times are ISO 8601 UTC text with milliseconds ('2026-11-30T02:00:00.000Z'), so they sort
-- as text and any SQLite client can read them.

CREATE TABLE sources (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('account', 'jokes')),
    url        TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('replace', 'merge')),
    ttl_s      INTEGER NOT NULL CHECK (ttl_s > 0),
    headers    TEXT NOT NULL DEFAULT '[]',  -- JSON array of "Name: value" strings
    token_env  TEXT,                        -- the variable's name; its value is never stored
    max_bytes  INTEGER,
    created_at TEXT NOT NULL
) STRICT;

-- Bookkeeping, apart from the cached data.
CREATE TABLE sync_state (
    source          TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    confirmed_at    TEXT,  -- when upstream last confirmed every cached row of the source
    last_success_at TEXT,
    last_attempt_at TEXT,
    last_outcome    TEXT,
    last_error      TEXT,
    next_attempt_at TEXT
) STRICT;

CREATE TABLE sync_runs (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged', 'failed', 'skipped')),
    inserted    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    deleted     INTEGER NOT NULL DEFAULT 0,
    http_status INTEGER,
    bytes       INTEGER,
    error       TEXT
) STRICT;
CREATE INDEX sync_runs_by_source ON sync_runs (source, id);

-- The cached data. seen_at: when upstream last returned the row (merge sources) or when the
-- row was last written (replace sources, whose rows are all confirmed by sync_state.confirmed_at).
CREATE TABLE accounts (
    source  TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    balance REAL NOT NULL,
    seen_at TEXT NOT NULL
) STRICT;

-- Upstream transactions carry no id: a transaction is known by its date and vendor, with an
-- ordinal for repeats in one response, and its id is a hash of those and the source.
CREATE TABLE transactions (
    id      TEXT PRIMARY KEY,
    source  TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    date    TEXT NOT NULL,
    vendor  TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    type    INTEGER NOT NULL,
    amount  REAL NOT NULL,
    seen_at TEXT NOT NULL,
    UNIQUE (source, date, vendor, ordinal)
) STRICT;

CREATE TABLE jokes (
    source    TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    id        INTEGER NOT NULL,
    type      TEXT NOT NULL,
    setup     TEXT NOT NULL,
    punchline TEXT NOT NULL,
    seen_at   TEXT NOT NULL,
    PRIMARY KEY (source, id)
) STRICT;
