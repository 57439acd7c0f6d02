-- Named queries of what users and operators touch (CLI, HTTP, dashboard, metrics),
-- loaded once by analysis/surfacedb.py. Same layout as queries.sql: "-- name --", one
-- line of description, %(named)s parameters, names entity first ending in how many rows.

-- account_create_one --
-- A new account with the next free id and a name; the grant goes to the ledger.
-- Runs under the "accounts" advisory lock, so two creations never pick the same id.
WITH account AS (
    INSERT INTO accounts (user_id, name, email, credits)
    SELECT coalesce(max(user_id), 0) + 1, %(account_name)s, %(email)s, %(credits)s FROM accounts
    RETURNING user_id, credits
), grant_entry AS (
    INSERT INTO credit_ledger (user_id, kind, amount)
    SELECT user_id, 'grant', %(credits)s FROM account WHERE %(credits)s > 0
)
SELECT user_id, credits FROM account;

-- account_by_ref_one --
-- An account by name, else by id (user_id is NULL unless the reference is a number).
SELECT user_id FROM accounts
WHERE name = %(ref)s OR user_id = %(user_id)s
ORDER BY (name = %(ref)s) DESC
LIMIT 1;

-- account_view_one --
-- One account with its job counts by status.
SELECT a.user_id, a.name, a.email, a.credits, a.created_at,
       (SELECT coalesce(jsonb_object_agg(s.status, s.n), '{}'::jsonb)
        FROM (SELECT status::text AS status, count(*) AS n FROM analysis_jobs
              WHERE user_id = a.user_id GROUP BY status) s) AS jobs
FROM accounts a WHERE a.user_id = %(user_id)s;

-- token_insert_one --
-- Store a new token's hash.
INSERT INTO api_tokens (token_hash, user_id, operator, label)
VALUES (%(token_hash)s, %(user_id)s, %(operator)s, %(label)s)
RETURNING created_at;

-- token_holder_one --
-- Who a token acts for: (user_id, operator); no row for an unknown or revoked token.
SELECT user_id, operator FROM api_tokens
WHERE token_hash = %(token_hash)s AND revoked_at IS NULL;

-- request_hit_one --
-- Count one request of a user in a sliding window, unless the window is full.
-- Runs under the (user, bucket) advisory lock, so two web processes count exactly.
-- Returns (allowed, seconds until the oldest request in the window leaves it).
WITH clock AS (
    SELECT coalesce(%(now)s::timestamptz, clock_timestamp()) AS now
), recent AS (
    SELECT count(*) AS n, min(at) AS oldest FROM request_hits, clock
    WHERE user_id = %(user_id)s AND bucket = %(bucket)s
      AND at > clock.now - %(window_seconds)s * interval '1 second'
), pruned AS (
    DELETE FROM request_hits USING clock
    WHERE user_id = %(user_id)s AND bucket = %(bucket)s
      AND at <= clock.now - %(window_seconds)s * interval '1 second'
), hit AS (
    INSERT INTO request_hits (user_id, bucket, at)
    SELECT %(user_id)s, %(bucket)s, clock.now FROM recent, clock WHERE recent.n < %(limit)s
    RETURNING at
)
SELECT EXISTS (SELECT 1 FROM hit),
       greatest(extract(epoch FROM recent.oldest + %(window_seconds)s * interval '1 second' - clock.now), 0)::float8
FROM recent, clock;

-- job_views_many --
-- Jobs as users see them: newest first, a queued job's position in its user's queue
-- (1 = next to start), the sources it analyses. Of one user, or the given ids.
SELECT j.id, j.user_id, j.status::text,
       CASE WHEN j.status = 'queued' THEN
           (SELECT count(*) FROM analysis_jobs q
            WHERE q.user_id = j.user_id AND q.status = 'queued' AND q.id <= j.id)
       END AS position,
       j.delta_of_job_id, j.thesis_id,
       coalesce((SELECT array_agg(d.document_id ORDER BY d.document_id) FROM analysis_job_documents d
                 WHERE d.job_id = j.id AND d.document_id <> j.thesis_id), '{}') AS source_ids,
       j.created_at, j.promoted_at, j.started_at, j.finished_at, j.failure_reason,
       (SELECT filename FROM documents WHERE id = j.thesis_id) AS thesis_filename
FROM analysis_jobs j
WHERE (%(user_id)s::bigint IS NULL OR j.user_id = %(user_id)s)
  AND (%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
ORDER BY j.id DESC
LIMIT %(limit)s;

-- documents_recent_many --
-- A user's documents, newest first.
SELECT id, kind::text, filename, status::text, doi, created_at FROM documents
WHERE user_id = %(user_id)s
ORDER BY id DESC
LIMIT %(limit)s;

-- job_counts_many --
-- Jobs by status (the metrics' queue depth by state).
SELECT status::text, count(*) FROM analysis_jobs GROUP BY status;

-- job_latency_buckets_many --
-- Cumulative histogram buckets (le, waited, ran) over every started job: seconds from
-- admission to start, and from start to finish (finished jobs only). Counted in SQL so
-- that every web process reports the same monotonic numbers.
SELECT b.le,
       count(j.id) FILTER (WHERE extract(epoch FROM j.started_at - j.created_at) <= b.le),
       count(j.id) FILTER (WHERE j.finished_at IS NOT NULL
                             AND extract(epoch FROM j.finished_at - j.started_at) <= b.le)
FROM unnest(%(buckets)s::float8[]) AS b(le)
LEFT JOIN analysis_jobs j ON j.started_at IS NOT NULL
GROUP BY b.le
ORDER BY b.le;

-- job_latency_totals_one --
-- Count and sum of both latencies (the histograms' _count and _sum).
SELECT count(*) FILTER (WHERE started_at IS NOT NULL),
       coalesce(sum(extract(epoch FROM started_at - created_at)), 0)::float8,
       count(*) FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL),
       coalesce(sum(extract(epoch FROM finished_at - started_at)) FILTER (WHERE started_at IS NOT NULL), 0)::float8
FROM analysis_jobs;

-- job_event_counts_many --
-- Transitions by kind since the beginning (promotions, release retries, refunds, ...).
SELECT event, count(*) FROM analysis_job_events GROUP BY event;

-- credit_refund_count_one --
-- Refunds ever written.
SELECT count(*) FROM credit_ledger WHERE kind = 'refund';

-- provider_calls_many --
-- Judge provider calls used today, against the limit.
SELECT provider, calls_used, call_limit FROM provider_daily_budget
WHERE day = (now() AT TIME ZONE 'utc')::date;

-- job_progress_many --
-- Citations judged so far and in all, per job (jobs not extracted yet have no row).
SELECT job_id, count(*) FILTER (WHERE verdict IS NOT NULL)::int, count(*)::int FROM job_citations
WHERE job_id = ANY(%(ids)s::bigint[])
GROUP BY job_id;

-- job_verdict_counts_many --
-- Verdicts per job and kind.
SELECT job_id, verdict::text, count(*)::int FROM job_citations
WHERE job_id = ANY(%(ids)s::bigint[]) AND verdict IS NOT NULL
GROUP BY job_id, verdict;

-- job_verdicts_many --
-- A job's citations in thesis order with their verdicts (NULL while not judged yet).
SELECT c.claim, c.marker, c.source_document_id, d.filename, c.verdict::text, c.confidence::float8, c.evidence
FROM job_citations c LEFT JOIN documents d ON d.id = c.source_document_id
WHERE c.job_id = %(job_id)s
ORDER BY c.ordinal;
