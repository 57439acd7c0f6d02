-- What users and operators touch: account names, API tokens, per-user request limits.

-- A human-friendly handle for the CLI (`citeq users create alice`); the id stays the key.
ALTER TABLE accounts ADD COLUMN name text;
CREATE UNIQUE INDEX accounts_name ON accounts (name) WHERE name IS NOT NULL;

-- Bearer tokens. Only a SHA-256 of the token is stored: a database dump grants nothing.
-- A user token acts for its user only; an operator token reaches the operator routes
-- (and acts for its user too, when it has one).
CREATE TABLE api_tokens (
    token_hash   bytea PRIMARY KEY,
    user_id      bigint REFERENCES accounts (user_id) ON DELETE CASCADE,
    operator     boolean NOT NULL DEFAULT false,
    label        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    CONSTRAINT api_tokens_has_holder CHECK (user_id IS NOT NULL OR operator)
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Sliding-window request limits, shared by every web process and kept over redeploys.
-- One row per counted request; rows older than the window are deleted when the same
-- (user, bucket) is counted again, so the table holds at most `limit` rows per pair.
CREATE TABLE request_hits (
    user_id bigint NOT NULL,
    bucket  text NOT NULL,   -- 'upload', 'admit'
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX request_hits_window ON request_hits (user_id, bucket, at);
