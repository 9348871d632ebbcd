-- How long a source may go without a successful sync before `cache status --max-age` reports it
-- (seconds; NULL: the --max-age given on the command line).
ALTER TABLE sources ADD COLUMN alert_after_s INTEGER CHECK (alert_after_s > 0);
