-- What it was: `list --as-of` and `cache log` rebuild past rows from the change log, from the
-- newest run backwards, so they need every run after the moment asked for. history_horizon is
-- the earliest moment a source's log answers for: `cache prune` moves it past the runs it
-- deletes, a re-key (`sources set --key`) to that moment. No row: the whole history is there.
-- wrote_at and confirmed_at keep the newest of the runs pruned (see sync_runs).
CREATE TABLE history_horizon (
    source       TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    since_at     TEXT NOT NULL,
    wrote_at     TEXT,
    confirmed_at TEXT
) STRICT;

-- The rows' seen_at as of a past moment: when a successful run wrote the rows it wrote or
-- touched (their seen_at), and when it confirmed every cached row of its source
-- (sync_state.confirmed_at then; a merge sync confirms only the rows it returned). Runs from
-- before are taken to have done so at their end, and those of replace sources to have confirmed.
-- unconfirmations: each time a new URL, key or delimiter left the rows unconfirmed (`sources
-- set`, which also moves their seen_at back).
ALTER TABLE sync_runs ADD COLUMN wrote_at TEXT;
ALTER TABLE sync_runs ADD COLUMN confirmed_at TEXT;
UPDATE sync_runs SET wrote_at = finished_at WHERE outcome IN ('updated', 'unchanged');
UPDATE sync_runs SET confirmed_at = finished_at
WHERE outcome IN ('updated', 'unchanged') AND source IN (SELECT name FROM sources WHERE mode = 'replace');
CREATE TABLE unconfirmations (
    source         TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    unconfirmed_at TEXT NOT NULL
) STRICT;
CREATE INDEX unconfirmations_by_source ON unconfirmations (source, unconfirmed_at);

-- In a cache made before, what an earlier prune deleted is unknown: the log answers from each
-- source's oldest run still kept, or from now where rows are cached without any run.
INSERT INTO history_horizon (source, since_at)
SELECT s.name, coalesce((SELECT min(r.finished_at) FROM sync_runs r WHERE r.source = s.name),
                        strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
FROM sources s
WHERE EXISTS (SELECT 1 FROM sync_runs r WHERE r.source = s.name)
   OR EXISTS (SELECT 1 FROM accounts a WHERE a.source = s.name)
   OR EXISTS (SELECT 1 FROM jokes j WHERE j.source = s.name)
   OR EXISTS (SELECT 1 FROM records r WHERE r.source = s.name);

-- Full-text search (`cache search`): a document per joke (setup and punchline), per record
-- (its string values) and per vendor of an account's transactions, kept in step with the rows
-- by every reconcile, in its transaction. search_docs gives a document's rowid in search_index
-- from its source and key; the index matches without case or accents (`cafe` finds `Café`).
-- Migration 19 indexes the rows already cached. A source may keep no index (`--search off`).
ALTER TABLE sources ADD COLUMN search INTEGER NOT NULL DEFAULT 1 CHECK (search IN (0, 1));
CREATE TABLE search_docs (
    id     INTEGER PRIMARY KEY,
    source TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    doc    TEXT NOT NULL,
    UNIQUE (source, doc)
) STRICT;

CREATE VIRTUAL TABLE search_index USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');

-- A document deleted (its row gone, or its source removed) leaves the index with it.
CREATE TRIGGER search_docs_deleted AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_index WHERE rowid = old.id;
END;
