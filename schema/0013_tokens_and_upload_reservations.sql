-- Two things of issue 11: token expiry and revocation, and upload reservations.

-- Tokens expire and can be revoked one by one (issue 11). Each token gets a public id to
-- name it by (`citeq users tokens USER` lists them, `citeq users revoke ID` revokes one),
-- an expiry (CITEQ_TOKEN_TTL_DAYS at minting, default 90) and the time it was last used
-- (written at most once a minute per token, so authentication stays a read).
ALTER TABLE api_tokens
    ADD COLUMN id           bigint GENERATED ALWAYS AS IDENTITY,
    ADD COLUMN expires_at   timestamptz,
    ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_id_unique UNIQUE (id);

-- Tokens minted before expiry existed never expired; they now get the default lifetime
-- from this migration on, rather than being cut off by it.
UPDATE api_tokens SET expires_at = now() + interval '90 days' WHERE expires_at IS NULL;
ALTER TABLE api_tokens ALTER COLUMN expires_at SET NOT NULL;

-- An upload being received holds a reservation of a parse slot and of its bytes, taken from
-- its headers before the body is read and dropped when it is staged (or refused, or after
-- expires_at if its web process died). Ten concurrent uploads of a user with three free
-- slots: seven are refused before their bodies are read, not after.
CREATE TABLE upload_reservations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint NOT NULL,
    bytes      bigint NOT NULL CHECK (bytes >= 0),
    expires_at timestamptz NOT NULL
);
CREATE INDEX upload_reservations_user ON upload_reservations (user_id, expires_at);
