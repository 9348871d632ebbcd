-- Local edits (`cache edit`, `cache push`): an outbox of edits as data, and the rows as the cache
-- shows them with those edits (the overlay), apart from `records`, which keeps what the upstream
-- last said. A sync writes only `records`, so it never overwrites a pending edit.
--
-- outbox: one row per edit, in the order made (seq). `request` is the request as it will be
-- sent (method, URL, Idempotency-Key, If-Match, body), stored before it is sent, so a retry of a
-- request whose answer was lost is the same request. `claim` names the push holding an edit
-- in flight (pid and token), which a later push checks as sync leases are checked.
CREATE TABLE outbox (
    id            TEXT PRIMARY KEY,
    seq           INTEGER NOT NULL UNIQUE,
    source        TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    op            TEXT NOT NULL CHECK (op IN ('create', 'patch', 'replace', 'delete')),
    body          TEXT CHECK (body IS NULL OR json_valid(body)),
    base          TEXT,
    base_etag     TEXT,
    remote        TEXT,
    remote_etag   TEXT,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'in_flight', 'conflict', 'rejected', 'blocked', 'applied', 'dropped')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    made_at       TEXT NOT NULL,
    next_at       TEXT,
    request       TEXT CHECK (request IS NULL OR json_valid(request)),
    claim         TEXT,
    answer_status INTEGER,
    answer        TEXT,
    finished_at   TEXT
) STRICT;
CREATE INDEX outbox_by_key ON outbox (source, key, seq);
CREATE INDEX outbox_open ON outbox (source, seq) WHERE state NOT IN ('applied', 'dropped');
-- A push takes the oldest queued edit, and finds the in-flight ones, without reading the
-- applied ones before them.
CREATE INDEX outbox_by_state ON outbox (state, seq);

-- Each edit's life, for `cache log NAME KEY`: edited, sent, applied, conflict, rejected, …
CREATE TABLE outbox_log (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: the server's events follow it
    edit   TEXT NOT NULL REFERENCES outbox(id) ON DELETE CASCADE,
    at     TEXT NOT NULL,
    event  TEXT NOT NULL,
    detail TEXT
) STRICT;
CREATE INDEX outbox_log_by_edit ON outbox_log (edit);

-- The overlay: a row with edits shows `record`; a `removed` one shows it while the removal is
-- pending, and not at all once it applied. A record made here, not yet at the upstream, is
-- `created`. `pending` is 0 once every edit of the row applied. Since an edit applied
-- (`settled_at`), `upstream` is the version the upstream's answer gave (`upstream_gone`: it
-- removed the record): what the row's open edits are shown on, until a sync begun after then
-- brings the upstream's own version, which ends it (and the row's overlay, if nothing is pending).
CREATE TABLE record_overlay (
    source        TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    record        TEXT NOT NULL,
    removed       INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1)),
    created       INTEGER NOT NULL CHECK (created IN (0, 1)),
    pending       INTEGER NOT NULL DEFAULT 1 CHECK (pending IN (0, 1)),
    upstream      TEXT,
    upstream_gone INTEGER NOT NULL DEFAULT 0 CHECK (upstream_gone IN (0, 1)),
    settled_at    TEXT,
    made_at       TEXT NOT NULL,
    PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;

-- Each source's overlay version, moved by every change of its overlay: part of the validator
-- `cache serve` gives its rows, so a page revalidating them sees an edit at once. (No foreign
-- key: a source's removal deletes its overlay rows, whose triggers still count.)
CREATE TABLE overlay_versions (
    source  TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TRIGGER overlay_inserted AFTER INSERT ON record_overlay BEGIN
    INSERT INTO overlay_versions (source, version) VALUES (NEW.source, 1) ON CONFLICT (source) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER overlay_updated AFTER UPDATE ON record_overlay BEGIN
    INSERT INTO overlay_versions (source, version) VALUES (NEW.source, 1) ON CONFLICT (source) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER overlay_deleted AFTER DELETE ON record_overlay BEGIN
    INSERT INTO overlay_versions (source, version) VALUES (OLD.source, 1) ON CONFLICT (source) DO UPDATE SET version = version + 1;
END;

-- The ETag the upstream gave a record in a write's answer, with the record it named: an edit
-- made on that very record sends it as If-Match.
CREATE TABLE record_etags (
    source TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    etag   TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;

-- The Idempotency-Keys clients of `cache serve` sent with their edits (draft-ietf-httpapi-
-- idempotency-key-header): the request's fingerprint and the first answer, kept a day, so a
-- retry gets that answer and the same key with another request is refused.
CREATE TABLE edit_requests (
    key         TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status      INTEGER NOT NULL,
    answer      TEXT NOT NULL,
    at          TEXT NOT NULL
) STRICT;

-- `pending` is a column of every record view now: a field of that name keeps its value in
-- `record`, as a field named `stale` does.
DELETE FROM record_fields WHERE lower(name) = 'pending';
