-- Sync runs counted by outcome, for the metrics' cache_sync_runs_total counter: a counter must
-- never go down, and `cache prune` deletes old runs. Kept by triggers on sync_runs, so every
-- writer counts the same way; a run's outcome is written when the run starts and updated when
-- it ends, so an update moves its count. Pruning runs leaves the totals; removing a source takes
-- its totals with it. (A migration that rebuilds sync_runs must make these triggers again.)
CREATE TABLE run_totals (
    source  TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    outcome TEXT NOT NULL,
    runs    INTEGER NOT NULL,
    PRIMARY KEY (source, outcome)
) STRICT, WITHOUT ROWID;

INSERT INTO run_totals (source, outcome, runs)
    SELECT source, outcome, count(*) FROM sync_runs GROUP BY source, outcome;

CREATE TRIGGER run_totals_on_insert AFTER INSERT ON sync_runs
BEGIN
    INSERT INTO run_totals (source, outcome, runs) VALUES (NEW.source, NEW.outcome, 1)
        ON CONFLICT (source, outcome) DO UPDATE SET runs = runs + 1;
END;

CREATE TRIGGER run_totals_on_outcome AFTER UPDATE OF outcome ON sync_runs
WHEN OLD.outcome != NEW.outcome
BEGIN
    UPDATE run_totals SET runs = runs - 1 WHERE source = OLD.source AND outcome = OLD.outcome;
    INSERT INTO run_totals (source, outcome, runs) VALUES (NEW.source, NEW.outcome, 1)
        ON CONFLICT (source, outcome) DO UPDATE SET runs = runs + 1;
END;
