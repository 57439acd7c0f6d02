-- The parse lifecycle declared once, in the database, as 0016 did for analysis jobs (issue 24):
-- which status changes parse jobs and parse items may make, what "busy" means, and the audit
-- event each change writes. Before this, uploads, parsing and the sweeps each guarded their
-- own changes and `status IN ('queued', 'running')` was spelled seven times.
-- Mirrored by analysis/pipeline/intake/lifecycle.py (ParseEvent, JOB_TRANSITIONS,
-- ITEM_TRANSITIONS); tests/integration/test_parse_lifecycle.py keeps the two in step.

-- What the parse audit trail records. Mirrored by analysis.pipeline.intake.lifecycle.ParseEvent.
CREATE TYPE parse_event_kind AS ENUM (
    'staged',         -- a parse job was inserted with its items
    'started',        -- a worker started (or, after a worker died, restarted) the job
    'resent',         -- a busy job's lost message was replaced
    'succeeded',      -- every item parsed
    'partial',        -- some items parsed, some failed
    'failed',         -- every item failed
    'item_started',   -- a worker took an item (detail: the attempt)
    'item_parsed',    -- an item's document exists; its bytes are gone
    'item_failed'     -- an item failed (detail: its error code); its bytes are gone
);

CREATE TABLE parse_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    parse_job_id bigint NOT NULL REFERENCES parse_jobs (id) ON DELETE CASCADE,
    item_id      bigint,
    user_id      bigint NOT NULL,
    event        parse_event_kind NOT NULL,
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    detail       text
);
CREATE INDEX parse_events_job ON parse_events (parse_job_id, id);

-- THE "busy" predicates: a parse job or item that a worker still has to finish. Inlined by
-- the planner, so the partial indexes on the same condition serve them.
CREATE FUNCTION is_busy(s parse_job_status) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN s IN ('queued', 'running');
CREATE FUNCTION is_busy(s parse_item_status) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN s IN ('queued', 'running');

-- Every status change a parse job may make, and its event. Born 'queued'. A job whose items
-- all expired ends from 'queued'; a re-delivered message restarts a running job.
CREATE VIEW parse_job_transitions (from_status, to_status, event) AS VALUES
    ('queued'::parse_job_status,  'running'::parse_job_status,   'started'::parse_event_kind),
    ('running', 'running',   'started'),
    ('queued',  'succeeded', 'succeeded'),
    ('queued',  'partial',   'partial'),
    ('queued',  'failed',    'failed'),
    ('running', 'succeeded', 'succeeded'),
    ('running', 'partial',   'partial'),
    ('running', 'failed',    'failed');

-- Every status change a parse item may make. An item found 'running' again was being parsed
-- by a worker that died (one more attempt); a staged item past the blob TTL fails unparsed.
CREATE VIEW parse_item_transitions (from_status, to_status, event) AS VALUES
    ('queued'::parse_item_status, 'running'::parse_item_status, 'item_started'::parse_event_kind),
    ('running', 'running', 'item_started'),
    ('running', 'parsed',  'item_parsed'),
    ('running', 'failed',  'item_failed'),
    ('queued',  'failed',  'item_failed');

CREATE FUNCTION parse_lifecycle_refuse(machine text, id bigint, from_status text, to_status text)
RETURNS parse_event_kind LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% % may not go from % to %', machine, id, from_status, to_status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'lifecycle_allowed_transition';
END $$;

CREATE FUNCTION parse_jobs_audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO parse_events (parse_job_id, user_id, event)
    SELECT id, user_id, 'staged' FROM born ORDER BY id;
    RETURN NULL;
END $$;

-- A job's change: its event, or a refusal of a change the transitions do not list. A restart
-- (running -> running) writes 'started' only when the worker's start is recorded anew, and a
-- replaced message writes 'resent'; other updates that keep the status write nothing.
CREATE FUNCTION parse_jobs_audit_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO parse_events (parse_job_id, user_id, event)
    SELECT n.id, n.user_id,
           CASE WHEN o.status = n.status AND n.message_id <> o.message_id THEN 'resent'::parse_event_kind
                ELSE coalesce(t.event, parse_lifecycle_refuse('parse job', n.id, o.status::text, n.status::text))
           END
    FROM before_change o JOIN after_change n USING (id)
    LEFT JOIN parse_job_transitions t ON t.from_status = o.status AND t.to_status = n.status
    WHERE o.status <> n.status OR n.message_id <> o.message_id
    ORDER BY n.id;
    RETURN NULL;
END $$;

CREATE FUNCTION parse_items_audit_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO parse_events (parse_job_id, item_id, user_id, event, detail)
    SELECT n.job_id, n.id, n.user_id,
           coalesce(t.event, parse_lifecycle_refuse('parse item', n.id, o.status::text, n.status::text)),
           CASE WHEN n.status = 'failed' THEN n.error_code ELSE n.attempts::text END
    FROM before_change o JOIN after_change n USING (id)
    LEFT JOIN parse_item_transitions t ON t.from_status = o.status AND t.to_status = n.status
    WHERE o.status <> n.status OR n.attempts <> o.attempts
    ORDER BY n.id;
    RETURN NULL;
END $$;

CREATE TRIGGER parse_jobs_audit_insert AFTER INSERT ON parse_jobs
    REFERENCING NEW TABLE AS born FOR EACH STATEMENT EXECUTE FUNCTION parse_jobs_audit_insert();
CREATE TRIGGER parse_jobs_audit_update AFTER UPDATE ON parse_jobs
    REFERENCING OLD TABLE AS before_change NEW TABLE AS after_change
    FOR EACH STATEMENT EXECUTE FUNCTION parse_jobs_audit_update();
CREATE TRIGGER parse_items_audit_update AFTER UPDATE ON parse_items
    REFERENCING OLD TABLE AS before_change NEW TABLE AS after_change
    FOR EACH STATEMENT EXECUTE FUNCTION parse_items_audit_update();

COMMENT ON TYPE parse_job_status IS
    'queued: staged, its message on the broker; running: a worker parses its items; '
    'succeeded | partial | failed: ended by its items. Allowed changes: parse_job_transitions.';
COMMENT ON TYPE parse_item_status IS
    'queued: bytes staged; running: a worker parses it; parsed | failed: ended, bytes dropped. '
    'Allowed changes: parse_item_transitions.';
