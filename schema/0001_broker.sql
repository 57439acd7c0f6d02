-- The broker's tables: messages (the queue), results, worker heartbeats.

CREATE TYPE citeq_message_state AS ENUM (
    'queued',   -- waiting for its eta and a free worker
    'running',  -- claimed by worker_id under lease_token until lease_expires_at
    'done',     -- acknowledged; pruned after the retention period
    'dead'      -- rejected or out of deliveries; kept until retried or purged
);

CREATE TABLE citeq_messages (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id       text NOT NULL,                 -- Dramatiq's message id (a retry keeps it)
    queue_name       text NOT NULL,
    actor_name       text NOT NULL,
    state            citeq_message_state NOT NULL DEFAULT 'queued',
    payload          bytea NOT NULL,                -- the encoded Dramatiq message
    eta              timestamptz NOT NULL DEFAULT now(),
    attempts         integer NOT NULL DEFAULT 0,    -- deliveries so far
    worker_id        text,
    lease_token      uuid,
    lease_expires_at timestamptz,
    idempotency_key  text,
    enqueued_at      timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    dead_reason      text,
    -- A running message always has an owner and a lease; nothing else holds a lease.
    CONSTRAINT citeq_messages_lease_iff_running CHECK (
        (state = 'running') = (worker_id IS NOT NULL AND lease_token IS NOT NULL
                               AND lease_expires_at IS NOT NULL)
    )
);

-- Every claim and ack rewrites a row (state is indexed, so no HOT update): a long drain
-- leaves dead entries at the head of the claim index that each claim has to step over.
-- Vacuum this table far more eagerly than the defaults (20 % of the table) so the cost of
-- a claim stays flat through a large backlog.
ALTER TABLE citeq_messages SET (
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_insert_scale_factor = 0.0,
    autovacuum_vacuum_insert_threshold = 20000,
    autovacuum_analyze_scale_factor = 0.0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);

-- The claim reads only this partial index, so finished rows never slow it down.
CREATE INDEX citeq_messages_claim ON citeq_messages (queue_name, eta, id) WHERE state = 'queued';
CREATE INDEX citeq_messages_leases ON citeq_messages (lease_expires_at) WHERE state = 'running';
CREATE INDEX citeq_messages_owner ON citeq_messages (worker_id) WHERE state = 'running';
CREATE INDEX citeq_messages_dead ON citeq_messages (queue_name, id) WHERE state = 'dead';
CREATE INDEX citeq_messages_finished ON citeq_messages (finished_at) WHERE state = 'done';
CREATE INDEX citeq_messages_message_id ON citeq_messages (message_id);
-- Same key, same message: the database, not the caller, rules out duplicates.
CREATE UNIQUE INDEX citeq_messages_idempotency ON citeq_messages (idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Wake-ups: one channel, the payload is only the queue's name (never the message).
-- Statement-level, so a batch of 1,000 inserts sends one notification per queue.
-- A queue that already had a due message waiting needs no wake-up: its consumers are
-- either claiming or full and will claim with their next ack. Skipping it matters: a
-- NOTIFY takes a database-wide lock from pre-commit to the end of the commit (WAL flush
-- included), so notifying transactions commit one at a time.
CREATE FUNCTION citeq_notify_ready() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    q text;
    first_id bigint;
BEGIN
    FOR q, first_id IN
        SELECT queue_name, min(id) FROM changed WHERE state = 'queued' AND eta <= now() GROUP BY queue_name
    LOOP
        IF NOT EXISTS (
            SELECT 1 FROM citeq_messages
            WHERE state = 'queued' AND queue_name = q AND eta <= now() AND id < first_id
        ) THEN
            PERFORM pg_notify('citeq_wakeup', q);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

CREATE TRIGGER citeq_messages_notify_insert AFTER INSERT ON citeq_messages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION citeq_notify_ready();
CREATE TRIGGER citeq_messages_notify_update AFTER UPDATE ON citeq_messages
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION citeq_notify_ready();

CREATE TABLE citeq_results (
    message_key text PRIMARY KEY,
    result      bytea NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX citeq_results_expiry ON citeq_results (expires_at);

-- One row per live broker process (workers and any process that consumes).
CREATE TABLE citeq_workers (
    worker_id    text PRIMARY KEY,
    hostname     text NOT NULL,
    pid          integer NOT NULL,
    queues       text[] NOT NULL DEFAULT '{}',
    started_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);
