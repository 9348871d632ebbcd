-- One sync per source at a time, across processes: the holder's pid, a token that tells
-- apart a reused pid, and an expiry after which anyone may take the lease over. A lease whose
-- holder has died is taken over at once.
CREATE TABLE sync_leases (
    source       TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    holder_pid   INTEGER NOT NULL,
    holder_token TEXT NOT NULL,
    acquired_at  TEXT NOT NULL,
    expires_at   TEXT NOT NULL
) STRICT;

-- Why a run was skipped ("already syncing, pid 123"); failures keep using `error`.
ALTER TABLE sync_runs ADD COLUMN note TEXT;
