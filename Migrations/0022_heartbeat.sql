-- The primary's heartbeat: one row, stamped by every `cache sync` on a writable cache (one that
-- finds nothing stale too). It replicates with the file, so a read-only follower can tell how far
-- behind its primary it is: now minus this time is at most the primary's sync interval plus the
-- replication's delay.
CREATE TABLE heartbeat (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at TEXT NOT NULL
) STRICT;
