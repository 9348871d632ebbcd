-- A source's search index is built the first time it is searched (or by `cache reindex`), and
-- from then on kept in step by every reconcile, in its transaction: a source nobody searches
-- pays nothing at sync time. A row here says the source's documents are built. Sources that
-- kept an index before this migration keep it.
CREATE TABLE search_built (
    source   TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    built_at TEXT NOT NULL
) STRICT;
INSERT INTO search_built (source, built_at)
SELECT name, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM sources WHERE search = 1;
