-- OAuth2 client credentials for a source: the token endpoint, the names of the environment
-- variables that hold the client id and secret, and the scope asked for. The secret and the
-- tokens are never stored: a token lives in the memory of the process that asked for it.
ALTER TABLE sources ADD COLUMN oauth_token_url TEXT;
ALTER TABLE sources ADD COLUMN client_id_env TEXT;
ALTER TABLE sources ADD COLUMN client_secret_env TEXT;
ALTER TABLE sources ADD COLUMN oauth_scope TEXT;
