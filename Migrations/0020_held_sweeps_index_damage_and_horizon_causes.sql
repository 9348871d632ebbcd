-- A full sweep of an incremental source that the removal guard held (`sync --full`, or one due by
-- --full-every) stays due until a full sweep lands: the next sync sweeps again, and the
-- `sync NAME --accept-removals` that the held message names applies it.
ALTER TABLE sync_state ADD COLUMN sweep_held INTEGER NOT NULL DEFAULT 0 CHECK (sweep_held IN (0, 1));

-- A damaged search index never stops the rows from syncing: a reconcile that cannot bring the
-- index up to date lands its rows all the same, and records here since when (and why) the
-- source's documents are out of step, until `cache reindex` mends them. `check`, `status` and
-- `metrics` report it.
ALTER TABLE sync_state ADD COLUMN index_damaged_at TEXT;
ALTER TABLE sync_state ADD COLUMN index_damage TEXT;

-- Why each source's history starts where it does, so a moment before it is refused with the one
-- real reason: 'added' (the source was added then), 'pruned' (older runs were pruned) or
-- 'rekeyed' (its rows were keyed anew). Horizons from before are left unexplained (NULL).
ALTER TABLE history_horizon ADD COLUMN cause TEXT CHECK (cause IN ('added', 'pruned', 'rekeyed'));
