-- Named queries of the per-user analysis queue, loaded once by analysis/db.py.
-- Every block starts with "-- name --" and a one-line description; parameters are
-- %(named)s. Names are entity first and end in how many rows come back.
-- Transitions are guarded (WHERE status = ...): zero rows means "not in that state any
-- more", which the caller handles. The database declares the lifecycle (schema/0016):
-- a status change analysis_job_transitions does not list fails, and the triggers write
-- the audit events (analysis_job_events) — no statement here inserts one. "The user is
-- busy" is the view analysis_jobs_blocking. Timestamps of transitions use clock_timestamp().

-- account_get_one --
-- The account admission charges; no row means an unknown user.
SELECT credits FROM accounts WHERE user_id = %(user_id)s;

-- account_upsert_one --
-- Create an account (or top it up) with a grant in the ledger.
WITH account AS (
    INSERT INTO accounts (user_id, email, credits)
    VALUES (%(user_id)s, %(email)s, %(credits)s)
    ON CONFLICT (user_id) DO UPDATE SET credits = accounts.credits + excluded.credits
    RETURNING user_id, credits
), grant_entry AS (
    INSERT INTO credit_ledger (user_id, kind, amount)
    SELECT user_id, 'grant', %(credits)s FROM account WHERE %(credits)s > 0
)
SELECT credits FROM account;

-- job_get_one --
-- One job of a user (the delta re-check's original, a job to cancel).
SELECT id, user_id, status::text, delta_of_job_id FROM analysis_jobs
WHERE id = %(job_id)s AND (%(user_id)s::bigint IS NULL OR user_id = %(user_id)s);

-- job_turn_holder_one --
-- Whether this message holds the turn of this job while the job has not ended (its
-- release belongs to the job's end, not to a skipped delivery).
SELECT id FROM analysis_jobs
WHERE id = %(job_id)s AND slot_message_id = %(message_id)s AND status IN ('queued', 'pending', 'running');

-- admission_documents_many --
-- Before the user's lock (nothing here can change under a running admission): the given
-- documents that belong to the user, and whether the delta re-check's original job is
-- one of theirs. Always one row at least; a document id of NULL means none of them.
-- @prepared
SELECT d.id, d.kind::text, d.status::text, d.doi, base.found AS delta_base_found
FROM (SELECT %(delta_of_job_id)s::bigint IS NULL
             OR EXISTS (SELECT 1 FROM analysis_jobs
                        WHERE id = %(delta_of_job_id)s AND user_id = %(user_id)s) AS found) AS base
LEFT JOIN documents d ON d.user_id = %(user_id)s AND d.id = ANY(%(ids)s::bigint[]);

-- job_admit_one --
-- Under the user's lock, in one statement: the job an earlier admission with the same
-- idempotency key created, the facts admission checks (balance, active first-pass jobs,
-- the judge provider's budget for today) and, only when there is no earlier job, the
-- checks made before the lock passed (checked) and every fact admits it, the new job.
-- The INSERT decides its status as the broker decides its analyze message's: a delta
-- re-check is pending (its message is ungrouped); a first-pass job is pending when the
-- user's message group has room (citeq_group_has_room: its message is born runnable),
-- else queued (its message is born held). Sent after the user's lock and the group's lock
-- (the message is written at commit, under the same group lock): the decision cannot race
-- another admission, a release or the broker's own promotions. The same statement
-- links the documents and creates the held run (the trigger records the admission). No job id back:
-- the caller raises the first failed check. The charge is a statement of its own
-- (credit_charge_one) after this one, sent with the commit: it must see the job's effects (tests drain the
-- balance with an AFTER INSERT trigger to stand in for a spender without the lock).
-- @prepared
WITH existing AS (
    SELECT id, status::text AS status FROM analysis_jobs
    WHERE user_id = %(user_id)s AND idempotency_key = %(idempotency_key)s
), facts AS (
    SELECT
        (SELECT credits FROM accounts WHERE user_id = %(user_id)s) AS balance,
        -- Counted in two parts, each the predicate of a partial index: one condition over
        -- all three statuses matches no index, and the server then scanned every job ever
        -- admitted (29 ms per admission with 200,000 finished jobs). Queued implies
        -- first-pass (a CHECK keeps delta re-checks out of 'queued').
        ((SELECT count(*) FROM analysis_jobs WHERE user_id = %(user_id)s AND status = 'queued')
         + (SELECT count(*) FROM analysis_jobs_blocking WHERE user_id = %(user_id)s)
        )::int AS active_jobs,
        coalesce((SELECT calls_used >= call_limit FROM provider_daily_budget
                  WHERE provider = %(provider)s AND day = (now() AT TIME ZONE 'utc')::date), false)
            AS budget_exhausted
), decided AS (
    SELECT CASE
        WHEN %(delta_of_job_id)s::bigint IS NOT NULL THEN 'pending'
        WHEN citeq_group_has_room(%(group_queue)s, %(group_key)s, 1) THEN 'pending'
        ELSE 'queued'
    END::analysis_job_status AS status
    FROM facts
    WHERE %(checked)s AND NOT EXISTS (SELECT 1 FROM existing)
      AND balance >= %(cost)s
      AND (%(delta_of_job_id)s::bigint IS NOT NULL OR active_jobs < %(max_active_jobs)s)
      AND NOT budget_exhausted
), job AS (
    INSERT INTO analysis_jobs (user_id, thesis_id, delta_of_job_id, status, cost, message_id,
                               idempotency_key, options, promoted_at, slot_message_id)
    SELECT %(user_id)s, %(thesis_id)s, %(delta_of_job_id)s, decided.status, %(cost)s, %(message_id)s,
           %(idempotency_key)s, %(options)s::jsonb,
           CASE WHEN decided.status = 'pending' THEN clock_timestamp() END,
           CASE WHEN %(delta_of_job_id)s::bigint IS NULL THEN %(message_id)s END
    FROM decided
    RETURNING id, user_id, status
), linked AS (
    INSERT INTO analysis_job_documents (job_id, document_id)
    SELECT job.id, d.id FROM job, unnest(%(document_ids)s::bigint[]) AS d(id)
), held AS (
    INSERT INTO held_runs (job_id) SELECT id FROM job
)
SELECT (SELECT id FROM existing), (SELECT status FROM existing),
       f.balance, f.active_jobs, f.budget_exhausted,
       (SELECT id FROM job), (SELECT status::text FROM job)
FROM facts f;

-- credit_charge_one --
-- Charge a job's cost: debit the balance and write the ledger row (unique per job and
-- kind). An overdraft fails on accounts_credits_not_negative, which admission turns into
-- InsufficientCredits: so the charge needs no answer and can go out with the commit.
-- @prepared
WITH debit AS (
    UPDATE accounts SET credits = credits - %(amount)s
    WHERE user_id = %(user_id)s
    RETURNING user_id
)
INSERT INTO credit_ledger (user_id, job_id, kind, amount)
SELECT user_id, %(job_id)s, 'charge', -%(amount)s FROM debit;

-- credit_refund_one --
-- Give a job's charge back, at most once: the ledger's unique (job, kind) makes a second
-- refund insert nothing, and the balance moves only with an inserted row.
WITH entry AS (
    INSERT INTO credit_ledger (user_id, job_id, kind, amount)
    SELECT user_id, job_id, 'refund', -amount FROM credit_ledger
    WHERE job_id = %(job_id)s AND kind = 'charge'
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
    RETURNING user_id, amount
)
UPDATE accounts a SET credits = a.credits + entry.amount
FROM entry WHERE a.user_id = entry.user_id
RETURNING entry.amount;

-- jobs_promote_by_message_many --
-- Under the users' locks, in the transaction that released the users' turns (sent in the
-- release's round trip, after it: it sees the broker's promotions), or for the resume sweep
-- and a worker that found a queued job's message delivered: the queued jobs whose analyze
-- message holds their user's turn and is runnable or running (the broker promoted it)
-- become pending, so a job's status agrees with its message (queued: held; pending:
-- runnable). From the users' groups (one slot each: citeq_group_slots reads the broker's
-- in-flight index by key), then each message's job by its id. A user with a first-pass job
-- still pending or running is left alone (the one-active index would refuse it; the sweep
-- comes back).
-- @prepared
-- Looked up by arrays, whatever the statistics say (as job_start_many): planned as a join,
-- a generic plan made while analysis_jobs looked nearly empty (the statistics of a table
-- truncated or just loaded) walked every queued job and, for each, every live message (3.8 s
-- for one batch of 8 in scripts/bench_queue.py on PostgreSQL 15; 55 ms per job over a
-- drain), or every active job per slot. Here the named keys' slots are read first (a few rows
-- by the in-flight index), their jobs by slot_message_id among the users named (user_ids,
-- the users of group_keys), and those users' jobs pending or running.
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL enable_seqscan = off;
SET LOCAL jit = off;
UPDATE analysis_jobs j
SET status = 'pending', promoted_at = clock_timestamp(), promoted_via = %(via)s
WHERE j.slot_message_id = ANY (ARRAY(
        SELECT s.message_id FROM citeq_group_slots s
        WHERE s.queue_name = %(queue_name)s AND s.group_key = ANY (%(group_keys)s::text[])
          AND s.state IN ('queued', 'running')))
  -- The users too: whichever index the plan reads the queued jobs by, it has a condition
  -- (planned as "a few rows", a scan of every queued job looked cheaper than ten probes).
  AND j.user_id = ANY (%(user_ids)s::bigint[]) AND j.status = 'queued'
  AND j.user_id <> ALL (ARRAY(SELECT a.user_id FROM analysis_jobs_blocking a
                              WHERE a.user_id = ANY (%(user_ids)s::bigint[])))
RETURNING j.id, j.user_id;

-- job_start_many --
-- Workers start jobs: pending -> running, many in one statement (a worker process batches
-- the starts of its threads). Only the job's own message may start it; a re-delivery of
-- that message (its worker died) restarts a running job. Any other message for the job is
-- a duplicate: no row for it, and the caller skips it. With release true (no release
-- check is configured, so there is nothing to wait for) the same statement releases the
-- held runs (the triggers record started, then released). Returns the held run's status
-- after the statement.
-- Worker-side transitions skip the synchronous commit, like the broker's acks and claims:
-- a database crash can only lose the newest commits, in order, and then the message's
-- ack is lost as well, so the message is re-delivered and the job re-run (at least once).
-- @prepared
-- Its generic plan (one lookup per item) fits every batch size; left to choose, the
-- server would plan each call anew for the array's length. That plan assumes ten items,
-- and on tables of a few thousand jobs it joined them by reading analysis_jobs and
-- held_runs whole, three times a call (1.0-1.1 ms for five jobs against 0.4 by key), more
-- with each dead row version a busy queue leaves until the next vacuum: the joins below
-- also name the batch's ids (= ANY), and with seq scans off the small held_runs table is
-- read by key too (scripts/bench_queue_profile.py, issue 27).
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL enable_seqscan = off;
SET LOCAL jit = off;
SET LOCAL synchronous_commit = off;
WITH target AS MATERIALIZED (
    -- One lookup per item, by id (the locked row is re-checked against the guard): joined
    -- with the whole array instead, the planner may walk every pending job when its
    -- statistics claim there are few.
    SELECT t.id FROM unnest(%(job_ids)s::bigint[], %(message_ids)s::text[]) AS i(job_id, message_id)
    CROSS JOIN LATERAL (
        SELECT id FROM analysis_jobs
        WHERE id = i.job_id AND message_id = i.message_id AND status IN ('pending', 'running')
        FOR UPDATE
    ) AS t
), started AS (
    UPDATE analysis_jobs j
    SET status = 'running', started_at = clock_timestamp()
    FROM target WHERE j.id = target.id AND j.id = ANY(%(job_ids)s::bigint[])
    RETURNING j.id, j.user_id, j.thesis_id, j.delta_of_job_id, j.options, j.message_id
), released AS (
    UPDATE held_runs h
    SET status = 'released', released_at = clock_timestamp(), next_attempt_at = NULL
    FROM started s
    WHERE %(release)s AND h.job_id = s.id AND h.status = 'held' AND h.job_id = ANY(%(job_ids)s::bigint[])
    RETURNING h.job_id
)
SELECT s.id, s.user_id, s.thesis_id, s.delta_of_job_id, s.options,
       CASE WHEN r.job_id IS NOT NULL THEN 'released' ELSE h.status::text END, s.message_id
FROM started s JOIN held_runs h ON h.job_id = s.id AND h.job_id = ANY(%(job_ids)s::bigint[])
LEFT JOIN released r ON r.job_id = s.id;

-- job_finish_many --
-- Under the users' locks: running jobs end (succeeded or failed), one statement for a batch;
-- the caller then releases the ended first-pass jobs' turns (their grouped analyze
-- messages, slot_message_id) in the same transaction, and the broker's promotions become
-- the next jobs' promotions (jobs_promote_by_message_many). A job that was not running any
-- more returns no row. The trigger writes each job's end.
-- Worker-side transitions skip the synchronous commit, like the broker's acks and claims:
-- a database crash can only lose the newest commits, in order, and then the message's
-- ack is lost as well, so the message is re-delivered and the job re-run (at least once).
-- @prepared
-- Its generic plan (one lookup per item) fits every batch size; left to choose, the
-- server would plan each call anew for the array's length.
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL synchronous_commit = off;
WITH target AS MATERIALIZED (
    -- One lookup per item, by id: see job_start_many. A job twice in the batch ends once.
    SELECT DISTINCT ON (t.id) t.id, i.outcome, i.reason
    FROM unnest(%(job_ids)s::bigint[], %(user_ids)s::bigint[], %(outcomes)s::text[], %(reasons)s::text[])
         AS i(job_id, user_id, outcome, reason)
    CROSS JOIN LATERAL (
        SELECT id FROM analysis_jobs
        WHERE id = i.job_id AND user_id = i.user_id AND status = 'running'
        FOR UPDATE
    ) AS t
    ORDER BY t.id
)
-- By key whatever the statistics say (= ANY), as in job_start_many.
UPDATE analysis_jobs j
SET status = target.outcome::analysis_job_status, finished_at = clock_timestamp(),
    failure_reason = target.reason
FROM target WHERE j.id = target.id AND j.id = ANY(%(job_ids)s::bigint[])
RETURNING j.id, j.user_id, j.slot_message_id;

-- job_cancel_one --
-- Withdraw a job that has not started: queued or pending -> canceled, its held run too.
WITH canceled AS (
    UPDATE analysis_jobs
    SET status = 'canceled', finished_at = clock_timestamp()
    WHERE id = %(job_id)s AND status IN ('queued', 'pending')
    RETURNING id, user_id, slot_message_id
), held AS (
    UPDATE held_runs SET status = 'canceled', next_attempt_at = NULL
    FROM canceled WHERE held_runs.job_id = canceled.id AND held_runs.status = 'held'
)
SELECT id, slot_message_id FROM canceled;

-- held_run_release_one --
-- The provider answered: the held run of a running job is released. No row: it was
-- released already, or expired/canceled meanwhile (then the work must not start).
-- Worker-side transitions skip the synchronous commit, like the broker's acks and claims:
-- a database crash can only lose the newest commits, in order, and then the message's
-- ack is lost as well, so the message is re-delivered and the job re-run (at least once).
SET LOCAL synchronous_commit = off;
UPDATE held_runs h
SET status = 'released', released_at = clock_timestamp(), next_attempt_at = NULL
FROM analysis_jobs j
WHERE h.job_id = %(job_id)s AND h.status = 'held' AND j.id = h.job_id AND j.status = 'running'
RETURNING h.job_id;

-- held_run_defer_one --
-- A release failed transiently: count it, open the release window at the first failure,
-- and schedule the next attempt with capped, jittered exponential backoff
-- (min(cap, base * 2^attempts) scaled by a random factor in [0.5, 1)).
UPDATE held_runs h
SET release_attempts = h.release_attempts + 1,
    last_error = %(error)s,
    window_ends_at = coalesce(h.window_ends_at,
                              coalesce(%(now)s, now()) + %(window_seconds)s * interval '1 second'),
    next_attempt_at = coalesce(%(now)s, now())
        + least(%(backoff_cap)s, %(backoff_base)s * power(2, h.release_attempts))
          * (0.5 + random() / 2) * interval '1 second'
FROM analysis_jobs j
WHERE h.job_id = %(job_id)s AND h.status = 'held' AND j.id = h.job_id
RETURNING h.release_attempts, h.next_attempt_at;

-- held_run_due_many --
-- Held runs of running jobs whose next release attempt is due (release-retry sweeper).
SELECT h.job_id, j.user_id FROM held_runs h JOIN analysis_jobs j ON j.id = h.job_id
WHERE h.status = 'held' AND h.next_attempt_at <= coalesce(%(now)s, now()) AND j.status = 'running'
ORDER BY h.next_attempt_at
LIMIT %(limit)s;

-- held_run_claim_retry_one --
-- Under the user's lock, take one due held run for this sweep: either its window is over
-- (expire = true) or it gets a new message and a redispatch deadline. The guard on
-- next_attempt_at makes a second sweeper find nothing.
WITH due AS (
    SELECT h.job_id, h.window_ends_at <= coalesce(%(now)s, now()) AS expire
    FROM held_runs h JOIN analysis_jobs j ON j.id = h.job_id
    WHERE h.job_id = %(job_id)s AND h.status = 'held' AND j.status = 'running'
      AND h.next_attempt_at <= coalesce(%(now)s, now())
    FOR UPDATE OF h
), expired AS (
    UPDATE held_runs h SET status = 'expired', next_attempt_at = NULL
    FROM due WHERE h.job_id = due.job_id AND due.expire
), redispatched AS (
    UPDATE held_runs h
    SET next_attempt_at = coalesce(%(now)s, now()) + %(redispatch_seconds)s * interval '1 second'
    FROM due WHERE h.job_id = due.job_id AND NOT due.expire
), job AS (
    UPDATE analysis_jobs j SET message_id = %(message_id)s
    FROM due WHERE j.id = due.job_id AND NOT due.expire
)
SELECT expire FROM due;

-- job_resend_one --
-- Under the user's lock and the user's group lock: give a pending job, or a queued one, a
-- new message id in place of a lost one; guarded on the old id, so two sweepers cannot both
-- re-send. A first-pass job's new message holds its turn; a queued job whose new message
-- will be born runnable (citeq_group_has_room, as at admission) becomes pending.
UPDATE analysis_jobs
SET message_id = %(message_id)s,
    slot_message_id = CASE WHEN delta_of_job_id IS NULL THEN %(message_id)s END,
    status = CASE WHEN status = 'queued' AND citeq_group_has_room(%(group_queue)s, %(group_key)s, 1)
                  THEN 'pending' ELSE status END,
    promoted_at = CASE WHEN status = 'queued' AND citeq_group_has_room(%(group_queue)s, %(group_key)s, 1)
                       THEN clock_timestamp() ELSE promoted_at END,
    promoted_via = CASE WHEN status = 'queued' THEN 'resume' ELSE promoted_via END
WHERE id = %(job_id)s AND status IN ('pending', 'queued') AND message_id = %(old_message_id)s
  -- the old message is gone, done, or a dead letter that holds nothing: a live one (held,
  -- runnable, running, parked, or dead while it holds the turn) is never replaced
  AND NOT EXISTS (SELECT 1 FROM citeq_messages m
                  WHERE m.message_id = %(old_message_id)s AND m.state <> 'done'
                    AND NOT (m.state = 'dead' AND m.group_release IS DISTINCT FROM 'manual'))
RETURNING id;

-- jobs_queued_without_message_many --
-- Queued jobs whose message is gone (an operator flushed the queue: held messages go too),
-- oldest first, so that their new messages line up in admission order; only of users whose
-- pending or running job still has its message (that one is re-sent first, and takes the turn).
SELECT j.id, j.message_id FROM analysis_jobs j
WHERE j.status = 'queued'
  AND NOT EXISTS (SELECT 1 FROM citeq_messages m WHERE m.message_id = j.message_id AND m.state <> 'done')
  AND NOT EXISTS (SELECT 1 FROM analysis_jobs_blocking b JOIN analysis_jobs a ON a.id = b.id
                  WHERE b.user_id = j.user_id
                    AND NOT EXISTS (SELECT 1 FROM citeq_group_slots s WHERE s.message_id = a.slot_message_id))
ORDER BY j.id
LIMIT %(limit)s;

-- job_pending_without_message_many --
-- Pending jobs whose message is neither queued nor running: it was lost (deleted,
-- pruned), dead-lettered or parked without starting the job (a database blip in the start
-- hook). Whether it still holds the user's turn decides how it is re-sent (userqueue.resend).
SELECT j.id, j.message_id FROM analysis_jobs j
WHERE j.status = 'pending'
  AND NOT EXISTS (SELECT 1 FROM citeq_messages m
                  WHERE m.message_id = j.message_id AND m.state IN ('queued', 'running'))
ORDER BY j.id
LIMIT %(limit)s;

-- job_running_with_dead_message_many --
-- Running jobs whose message was dead-lettered (its workers kept dying until the
-- deliveries ran out) and not re-queued since: they will never finish on their own.
SELECT j.id, j.user_id, m.dead_reason FROM analysis_jobs j
JOIN citeq_messages m ON m.message_id = j.message_id AND m.state = 'dead'
WHERE j.status = 'running'
  AND NOT EXISTS (SELECT 1 FROM citeq_messages l
                  WHERE l.message_id = j.message_id AND l.state IN ('queued', 'running'))
ORDER BY j.id
LIMIT %(limit)s;

-- jobs_ended_holding_turn_many --
-- Ended first-pass jobs whose analyze message still holds the user's turn in the broker
-- (citeq_group_slots): the job's end committed without its release (a lost fast path, an
-- operator's edit). The resume sweep releases them, and the users' queues move on. Read
-- from the broker's slots (one per busy user), never from the jobs' history.
SELECT j.id, j.user_id, s.message_id FROM citeq_group_slots s
JOIN analysis_jobs j ON j.slot_message_id = s.message_id
WHERE s.queue_name = %(queue_name)s AND j.status IN ('succeeded', 'failed', 'canceled')
ORDER BY j.id
LIMIT %(limit)s;

-- jobs_queued_in_flight_many --
-- Queued jobs whose analyze message runs or may run: the broker promoted it outside a job
-- transition (its sweep, after an operator purged the dead letter that held the turn).
-- The resume sweep makes them pending.
SELECT j.id, j.user_id, j.slot_message_id FROM analysis_jobs j
JOIN citeq_messages m ON m.message_id = j.slot_message_id AND m.state IN ('queued', 'running', 'parked')
WHERE j.status = 'queued'
ORDER BY j.id
LIMIT %(limit)s;

-- provider_budget_set --
-- Set a provider's call limit for a day (today when day is NULL).
INSERT INTO provider_daily_budget (provider, day, call_limit, calls_used)
VALUES (%(provider)s, coalesce(%(day)s, (now() AT TIME ZONE 'utc')::date), %(call_limit)s,
        coalesce(%(calls_used)s, 0))
ON CONFLICT (provider, day) DO UPDATE
SET call_limit = excluded.call_limit,
    calls_used = coalesce(%(calls_used)s, provider_daily_budget.calls_used);


