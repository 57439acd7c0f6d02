-- The job lifecycle declared once, in the database: which status changes are allowed, what
-- "the user is busy" means, and the audit event each change writes (issue 13).
--
-- Before this, every queue statement guarded its own transitions and inserted its own
-- audit event into a free-text column (eight CTEs), and the "busy" condition was copied
-- into four queries. Now a statement only changes a job's status; the triggers below
-- reject a change the table does not allow and write the event, as procrastinate does.
-- Mirrored by analysis/queue/jobs.py (JobStatus, JobEvent, TRANSITIONS, HELD_RUN_TRANSITIONS);
-- tests/integration/test_userqueue_admission.py keeps the two in step.

-- What the audit trail records. Mirrored by analysis.queue.jobs.JobEvent.
CREATE TYPE analysis_job_event_kind AS ENUM (
    'admitted',          -- a job was inserted (detail: the status it was born with)
    'promoted',          -- queued -> pending (detail: what promoted it)
    'started',           -- a worker started it: pending -> running, or a re-delivery restarted it
    'released',          -- its held run was released (judging may start)
    'release_deferred',  -- a release failed transiently; retried later (detail: the error)
    'resent',            -- a pending job's lost message was replaced
    'succeeded',         -- running -> succeeded
    'failed',            -- running -> failed (detail: failure_reason)
    'canceled'           -- queued or pending -> canceled
);

ALTER TABLE analysis_job_events
    ALTER COLUMN event TYPE analysis_job_event_kind USING event::analysis_job_event_kind;

-- How the job was promoted last (promote, resume, cancel, completion): the 'promoted'
-- event's detail, which the trigger cannot know otherwise.
ALTER TABLE analysis_jobs ADD COLUMN promoted_via text;

COMMENT ON TYPE analysis_job_status IS
    'queued: admitted and charged, waits for the user''s earlier first-pass job; '
    'pending: its message is on the broker; running: a worker started it; '
    'succeeded | failed (failure_reason, refunded): ended; '
    'canceled: withdrawn while queued or pending (refunded). '
    'A first-pass job is born queued or pending, a delta re-check pending. '
    'Allowed changes: analysis_job_transitions.';

-- Every status change a job may make, and the event it writes. A job is born 'queued' or
-- 'pending' (admission decides in its INSERT). Two updates keep the status and still are
-- transitions: a re-delivered message restarts a running job (started_at changes), and a
-- lost message of a pending job is replaced (message_id changes); any other update that
-- keeps the status (the pipeline's counters, a retried release's message) writes nothing.
-- A view of constants, not a table: the lifecycle is schema, not data (nothing writes it,
-- and truncating every table leaves it in place).
CREATE VIEW analysis_job_transitions (from_status, to_status, event) AS VALUES
    ('queued'::analysis_job_status,  'pending'::analysis_job_status,   'promoted'::analysis_job_event_kind),
    ('queued',  'canceled',  'canceled'),
    ('pending', 'pending',   'resent'),
    ('pending', 'running',   'started'),
    ('pending', 'canceled',  'canceled'),
    ('running', 'running',   'started'),
    ('running', 'succeeded', 'succeeded'),
    ('running', 'failed',    'failed');

-- The held run's changes. Its 'released' and 'release_deferred' events are written by its
-- own trigger (expiry and cancellation show in the job's own 'failed' / 'canceled').
CREATE VIEW held_run_transitions (from_status, to_status) AS VALUES
    ('held'::held_run_status, 'released'::held_run_status), ('held', 'expired'), ('held', 'canceled');

-- THE "user is busy" predicate: a user's first-pass job pending or running blocks their
-- queued jobs (promotion waits until the user has no row here). Its condition is the
-- partial unique index analysis_jobs_one_active_first_pass, so a lookup by user_id is one
-- probe of that index; the view is inlined by the planner and costs nothing.
CREATE VIEW analysis_jobs_blocking AS
SELECT id, user_id FROM analysis_jobs
WHERE delta_of_job_id IS NULL AND status IN ('pending', 'running');

-- Born: one 'admitted' event per inserted job.
CREATE FUNCTION analysis_jobs_audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO analysis_job_events (job_id, user_id, event, detail)
    SELECT id, user_id, 'admitted', status::text FROM born ORDER BY id;
    RETURN NULL;
END $$;

-- Raised by the audit triggers for a change the transitions do not list; returns nothing.
CREATE FUNCTION lifecycle_refuse(machine text, id bigint, from_status text, to_status text)
RETURNS analysis_job_event_kind LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% % may not go from % to %', machine, id, from_status, to_status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'lifecycle_allowed_transition';
END $$;

-- Changed: write the event of each change analysis_job_transitions lists, and fail on a
-- status change it does not list (lifecycle_refuse, called only for such a row). Per
-- statement (transition tables), not per row, and one pass over the changed rows: the
-- queue's batch statements start and finish many jobs at once. In one statement a job's
-- end comes before the promotion it frees.
CREATE FUNCTION analysis_jobs_audit_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO analysis_job_events (job_id, user_id, event, detail)
    SELECT n.id, n.user_id,
           coalesce(t.event, lifecycle_refuse('analysis job', n.id, o.status::text, n.status::text)),
           CASE t.event WHEN 'promoted' THEN n.promoted_via ELSE n.failure_reason END
    FROM before_change o JOIN after_change n USING (id)
    LEFT JOIN analysis_job_transitions t ON t.from_status = o.status AND t.to_status = n.status
    WHERE o.status <> n.status
       OR (n.status = 'running' AND n.started_at IS DISTINCT FROM o.started_at)
       OR (n.status = 'pending' AND n.message_id <> o.message_id)
    ORDER BY n.status IN ('succeeded', 'failed', 'canceled') DESC, n.id;
    RETURN NULL;
END $$;

CREATE TRIGGER analysis_jobs_audit_insert AFTER INSERT ON analysis_jobs
    REFERENCING NEW TABLE AS born FOR EACH STATEMENT EXECUTE FUNCTION analysis_jobs_audit_insert();
CREATE TRIGGER analysis_jobs_audit_update AFTER UPDATE ON analysis_jobs
    REFERENCING OLD TABLE AS before_change NEW TABLE AS after_change
    FOR EACH STATEMENT EXECUTE FUNCTION analysis_jobs_audit_update();

-- A held run: fail on a status change held_run_transitions does not list; write 'released'
-- and 'release_deferred' (one more failed attempt, detail the error).
CREATE FUNCTION held_runs_audit_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO analysis_job_events (job_id, user_id, event, detail)
    SELECT e.job_id, j.user_id, e.event, e.detail FROM (
        SELECT n.job_id,
               CASE WHEN t.from_status IS NULL
                    THEN lifecycle_refuse('held run of job', n.job_id, o.status::text, n.status::text)
                    WHEN n.status = 'released' THEN 'released'::analysis_job_event_kind END AS event,
               NULL AS detail
        FROM before_change o JOIN after_change n USING (job_id)
        LEFT JOIN held_run_transitions t ON t.from_status = o.status AND t.to_status = n.status
        WHERE o.status <> n.status
        UNION ALL
        SELECT n.job_id, 'release_deferred', n.last_error
        FROM before_change o JOIN after_change n USING (job_id)
        WHERE n.release_attempts > o.release_attempts
    ) AS e JOIN analysis_jobs j ON j.id = e.job_id
    WHERE e.event IS NOT NULL
    ORDER BY e.job_id;
    RETURN NULL;
END $$;

CREATE TRIGGER held_runs_audit_update AFTER UPDATE ON held_runs
    REFERENCING OLD TABLE AS before_change NEW TABLE AS after_change
    FOR EACH STATEMENT EXECUTE FUNCTION held_runs_audit_update();
