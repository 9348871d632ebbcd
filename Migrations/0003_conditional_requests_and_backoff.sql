-- Cron-grade sync: validators for conditional requests, the hash of the last body applied,
-- and the failure streak that sets next_attempt_at (sync_state already has that column).
ALTER TABLE sync_state ADD COLUMN etag TEXT;
ALTER TABLE sync_state ADD COLUMN last_modified TEXT;
ALTER TABLE sync_state ADD COLUMN body_hash TEXT;
ALTER TABLE sync_state ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

-- How many requests a run made (retries included).
ALTER TABLE sync_runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
