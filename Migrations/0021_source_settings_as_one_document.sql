-- A source's settings in one JSON document, keyed as a sources file keys them (each option's long
-- name without its dashes: "token-env", "has-more") with each value as the command line takes it
-- ("max-bytes": "1000", "header": ["Name: value"]); options at their defaults are left out. Beside
-- it stay the columns SQL reads: name, kind, url, mode, ttl_s, search and created_at. Durations
-- are moved as seconds ("lag": "300"), which a duration takes; the cache writes them as "5m" at the
-- source's next change. The table is rebuilt with its rowids (a source's identity includes them);
-- foreign keys are off around a migration, and the views that read it are made after.

CREATE TABLE sources_new (
    name       TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    url        TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('replace', 'merge')),
    ttl_s      INTEGER NOT NULL CHECK (ttl_s > 0),
    search     INTEGER NOT NULL DEFAULT 1 CHECK (search IN (0, 1)),
    created_at TEXT NOT NULL,
    settings   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings) AND json_type(settings) = 'object')
) STRICT;

INSERT INTO sources_new (rowid, name, kind, url, mode, ttl_s, search, created_at, settings)
SELECT rowid, name, kind, url, mode, ttl_s, search, created_at, json_patch('{}', json_object(
        'header', CASE WHEN json_valid(headers) AND json_array_length(headers) > 0 THEN json(headers) END,
        'token-env', token_env,
        'oauth-token-url', oauth_token_url,
        'client-id-env', client_id_env,
        'client-secret-env', client_secret_env,
        'scope', oauth_scope,
        'max-bytes', CAST(max_bytes AS TEXT),
        'ca-cert', ca_cert,
        'max-delete', max_delete,
        'alert-after', CAST(alert_after_s AS TEXT),
        'rows', CASE WHEN rows_path <> '$' THEN rows_path END,
        'key', key_fields,
        'next', next_page,
        'next-param', next_param,
        'first-page', CAST(first_page AS TEXT),
        'has-more', has_more,
        'max-pages', CASE WHEN max_pages <> 100 THEN CAST(max_pages AS TEXT) END,
        'since-param', since_param,
        'cursor-field', cursor_field,
        'lag', CASE WHEN lag_s > 0 THEN CAST(lag_s AS TEXT) END,
        'full-every', CASE WHEN full_every_s <> 86400 THEN CAST(full_every_s AS TEXT) END,
        'delimiter', CASE WHEN delimiter <> ',' THEN delimiter END))
FROM sources;

DROP TABLE sources;
ALTER TABLE sources_new RENAME TO sources;
