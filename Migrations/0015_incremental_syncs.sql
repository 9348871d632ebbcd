-- Incremental json sources: the query parameter the watermark is sent as (since_param), the
-- record field whose largest value is the watermark (cursor_field, a dot path), how far before
-- it to ask from (lag_s) and how often a sync is full instead (full_every_s). The watermark and
-- the time of the last full sweep are sync state.
ALTER TABLE sources ADD COLUMN since_param TEXT;
ALTER TABLE sources ADD COLUMN cursor_field TEXT;
ALTER TABLE sources ADD COLUMN lag_s INTEGER CHECK (lag_s >= 0);
ALTER TABLE sources ADD COLUMN full_every_s INTEGER CHECK (full_every_s > 0);
ALTER TABLE sync_state ADD COLUMN watermark TEXT;
ALTER TABLE sync_state ADD COLUMN last_full_at TEXT;
