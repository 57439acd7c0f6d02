-- The per-user analysis queue: accounts and credits, documents, analysis jobs, held runs,
-- the provider's daily budget. Invariants live here where SQL can state them.

CREATE TABLE accounts (
    user_id    bigint PRIMARY KEY,
    email      text UNIQUE,
    credits    integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- A charge that would overdraw the balance fails here even if the code forgot to check.
    CONSTRAINT accounts_credits_not_negative CHECK (credits >= 0)
);

CREATE TYPE document_kind AS ENUM ('thesis', 'source');

CREATE TYPE document_status AS ENUM (
    'uploaded',  -- bytes staged, not parsed yet
    'parsing',   -- a parse job works on it
    'parsed',    -- text available: can be analysed
    'failed'     -- parsing failed; the reason is on the parse item
);

-- Minimal on purpose: the parsing pipeline extends it in a later migration.
CREATE TABLE documents (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES accounts (user_id),
    kind       document_kind NOT NULL,
    filename   text NOT NULL,
    status     document_status NOT NULL DEFAULT 'uploaded',
    doi        text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_user ON documents (user_id, id);

-- Mirrored by analysis.jobs.JobStatus (a test keeps the two identical).
CREATE TYPE analysis_job_status AS ENUM (
    'queued',     -- admitted and charged; waits for the user's earlier first-pass job
    'pending',    -- its message is on the broker; a worker will start it
    'running',    -- a worker started it; blocks the user's queue until terminal
    'succeeded',  -- finished with a report
    'failed',     -- finished without a report; failure_reason says why; credit refunded
    'canceled'    -- withdrawn while queued; credit refunded
);

CREATE TABLE analysis_jobs (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          bigint NOT NULL REFERENCES accounts (user_id),
    thesis_id        bigint NOT NULL REFERENCES documents (id),
    -- Set for a delta re-check: it bypasses the user's queue entirely.
    delta_of_job_id  bigint REFERENCES analysis_jobs (id),
    status           analysis_job_status NOT NULL,
    cost             integer NOT NULL CHECK (cost >= 0),
    -- The Dramatiq message that owns the job: a re-delivery of it may (re)start the job,
    -- any other message for the job is a duplicate and is skipped.
    message_id       text NOT NULL,
    idempotency_key  text,
    options          jsonb NOT NULL DEFAULT '{}',
    failure_reason   text,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    promoted_at      timestamptz,
    started_at       timestamptz,
    finished_at      timestamptz,
    CONSTRAINT analysis_jobs_delta_never_queued CHECK (delta_of_job_id IS NULL OR status <> 'queued'),
    CONSTRAINT analysis_jobs_finished_iff_terminal CHECK (
        (status IN ('succeeded', 'failed', 'canceled')) = (finished_at IS NOT NULL)
    ),
    CONSTRAINT analysis_jobs_failed_has_reason CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
);

-- THE invariant: at no instant does a user have two first-pass jobs pending or running.
CREATE UNIQUE INDEX analysis_jobs_one_active_first_pass ON analysis_jobs (user_id)
    WHERE delta_of_job_id IS NULL AND status IN ('pending', 'running');
-- A repeated admission with the same key finds the first job.
CREATE UNIQUE INDEX analysis_jobs_idempotency ON analysis_jobs (user_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- Promotion reads the oldest queued job of a user; sweepers scan the non-terminal ones.
CREATE INDEX analysis_jobs_queued ON analysis_jobs (user_id, id) WHERE status = 'queued';
CREATE INDEX analysis_jobs_active ON analysis_jobs (status, id) WHERE status IN ('pending', 'running');

-- Thesis and sources a job analyses (the thesis is analysis_jobs.thesis_id as well).
CREATE TABLE analysis_job_documents (
    job_id      bigint NOT NULL REFERENCES analysis_jobs (id) ON DELETE CASCADE,
    document_id bigint NOT NULL REFERENCES documents (id),
    PRIMARY KEY (job_id, document_id)
);

-- Append-only history of every transition: the audit trail the tests and the dashboard read.
CREATE TABLE analysis_job_events (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id  bigint NOT NULL REFERENCES analysis_jobs (id) ON DELETE CASCADE,
    user_id bigint NOT NULL,
    event   text NOT NULL,  -- admitted, promoted, started, released, release_deferred, succeeded, ...
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    detail  text
);
CREATE INDEX analysis_job_events_job ON analysis_job_events (job_id, id);

CREATE TYPE credit_entry_kind AS ENUM (
    'grant',   -- credits bought or given; no job
    'charge',  -- admission of a job
    'refund'   -- a job that failed or was canceled gives its charge back
);

CREATE TABLE credit_ledger (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES accounts (user_id),
    job_id     bigint REFERENCES analysis_jobs (id),
    kind       credit_entry_kind NOT NULL,
    amount     integer NOT NULL,  -- signed: a charge is negative
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT credit_ledger_job_iff_not_grant CHECK ((kind = 'grant') = (job_id IS NULL)),
    CONSTRAINT credit_ledger_sign CHECK (CASE WHEN kind = 'charge' THEN amount <= 0 ELSE amount >= 0 END)
);
-- A job is charged at most once and refunded at most once, whatever retries or sweeps do.
CREATE UNIQUE INDEX credit_ledger_once_per_job ON credit_ledger (job_id, kind) WHERE job_id IS NOT NULL;

CREATE TYPE held_run_status AS ENUM (
    'held',      -- validated and paid for; waits for its job to start (or for a release retry)
    'released',  -- sources attached, judging may start
    'expired',   -- the release window ran out: the job failed with release_timeout
    'canceled'   -- its job was canceled before it started
);

CREATE TABLE held_runs (
    job_id             bigint PRIMARY KEY REFERENCES analysis_jobs (id) ON DELETE CASCADE,
    status             held_run_status NOT NULL DEFAULT 'held',
    release_attempts   integer NOT NULL DEFAULT 0,
    -- Set after a failed release: when the release-retry sweeper tries again.
    next_attempt_at    timestamptz,
    -- Set at the first failed release: after this the job fails with release_timeout.
    window_ends_at     timestamptz,
    last_error         text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    released_at        timestamptz,
    CONSTRAINT held_runs_retry_only_while_held CHECK (status = 'held' OR next_attempt_at IS NULL)
);
CREATE INDEX held_runs_due ON held_runs (next_attempt_at) WHERE status = 'held' AND next_attempt_at IS NOT NULL;

-- A judge provider's calls per UTC day, shared by all users. Admission refuses new work
-- once a day's budget is spent; judges add what they use.
CREATE TABLE provider_daily_budget (
    provider   text NOT NULL,
    day        date NOT NULL,
    call_limit integer NOT NULL CHECK (call_limit >= 0),
    calls_used integer NOT NULL DEFAULT 0 CHECK (calls_used >= 0),
    PRIMARY KEY (provider, day)
);
