-- Named queries of what users and operators touch (CLI, HTTP, dashboard, metrics),
-- loaded once by analysis/db.py. Same layout as queue/queries.sql: "-- name --", one
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
-- An account by id when the reference is a number (user_id set), else by name: never
-- both, so a name cannot shadow an id (all-digit names are refused at creation).
SELECT user_id FROM accounts
WHERE CASE WHEN %(user_id)s::bigint IS NOT NULL THEN user_id = %(user_id)s::bigint ELSE name = %(ref)s END;

-- account_view_one --
-- One account with its job counts by status.
SELECT a.user_id, a.name, a.email, a.credits, a.created_at,
       (SELECT coalesce(jsonb_object_agg(s.status, s.n), '{}'::jsonb)
        FROM (SELECT status::text AS status, count(*) AS n FROM analysis_jobs
              WHERE user_id = a.user_id GROUP BY status) s) AS jobs
FROM accounts a WHERE a.user_id = %(user_id)s;

-- token_insert_one --
-- Store a new token's hash with its expiry; its id.
INSERT INTO api_tokens (token_hash, user_id, operator, label, expires_at)
VALUES (%(token_hash)s, %(user_id)s, %(operator)s, %(label)s, now() + %(ttl_seconds)s * interval '1 second')
RETURNING id, expires_at;

-- token_holder_one --
-- Who a token acts for: (user_id, operator); no row for an unknown, revoked or expired
-- token. Notes the use, at most once a minute per token (the write is skipped otherwise).
WITH holder AS (
    SELECT id, user_id, operator, last_used_at FROM api_tokens
    WHERE token_hash = %(token_hash)s AND revoked_at IS NULL AND expires_at > now()
), used AS (
    UPDATE api_tokens t SET last_used_at = now()
    FROM holder h
    WHERE t.id = h.id AND (h.last_used_at IS NULL OR h.last_used_at < now() - interval '1 minute')
)
SELECT user_id, operator FROM holder;

-- tokens_of_holder_many --
-- The tokens of a user (or the operator tokens without a user), newest first.
SELECT id, user_id, operator, label, created_at, expires_at, last_used_at, revoked_at FROM api_tokens
WHERE CASE WHEN %(user_id)s::bigint IS NULL THEN user_id IS NULL ELSE user_id = %(user_id)s::bigint END
ORDER BY id DESC;

-- token_revoke_one --
-- Revoke a token by id (a second revocation keeps the first time), only the given user's
-- when user_id is set; no row for an unknown id.
UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
WHERE id = %(token_id)s AND (%(user_id)s::bigint IS NULL OR user_id = %(user_id)s::bigint)
RETURNING id, user_id, revoked_at;

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

-- job_live_counts_many --
-- Jobs not finished yet, by status, each from a partial index that holds only them.
SELECT 'queued', count(*) FROM analysis_jobs WHERE status = 'queued'
UNION ALL
SELECT status::text, count(*) FROM analysis_jobs WHERE status IN ('pending', 'running') GROUP BY status;

-- metrics_horizon_one --
-- How far the job events are folded into metrics_totals, with which histogram bounds, and
-- how far a fold may go now: below the xmin of this statement's snapshot, no transaction
-- is open (a later statement's snapshot sees all their events).
SELECT folded_below, buckets, pg_snapshot_xmin(pg_current_snapshot())::text::bigint FROM metrics_horizon;

-- metrics_restart_one --
-- Start the totals over (other histogram bounds, or no horizon row): the next fold takes
-- every event.
WITH emptied AS (DELETE FROM metrics_totals)
INSERT INTO metrics_horizon (folded_below, buckets) VALUES (0, %(buckets)s::float8[])
ON CONFLICT (only_row) DO UPDATE SET folded_below = 0, buckets = excluded.buckets;

-- metrics_fold_one --
-- Under the metrics lock: fold the events of the transactions in [lo, hi) -- those that
-- ended since the last fold, hi from metrics_horizon_one (schema/0007 says why that takes
-- each event once) -- into the totals, and move the horizon to hi. Per event kind a count;
-- per histogram the observations per bucket (the number of bounds below the value), their
-- sum and count: the wait is admission to a job's first start, the run a started job's
-- (last) start to its finish, taken when its outcome event is folded.
WITH folded AS (
    SELECT e.id, e.job_id, e.event, e.at FROM analysis_job_events e
    WHERE e.xact_id >= %(lo)s AND e.xact_id < %(hi)s
), waits AS (
    SELECT extract(epoch FROM f.at - j.created_at)::float8 AS seconds
    FROM folded f JOIN analysis_jobs j ON j.id = f.job_id
    WHERE f.event = 'started'
      AND NOT EXISTS (SELECT 1 FROM analysis_job_events p
                      WHERE p.job_id = f.job_id AND p.id < f.id AND p.event = 'started')
), runs AS (
    SELECT extract(epoch FROM j.finished_at - j.started_at)::float8 AS seconds
    FROM folded f JOIN analysis_jobs j ON j.id = f.job_id
    WHERE f.event IN ('succeeded', 'failed') AND j.started_at IS NOT NULL AND j.finished_at IS NOT NULL
), observations AS (
    SELECT 'wait' AS kind, seconds FROM waits UNION ALL SELECT 'run', seconds FROM runs
), observed AS (
    SELECT 'event:' || event AS name, count(*)::float8 AS value FROM folded GROUP BY event
    UNION ALL
    SELECT kind || ':' || (SELECT count(*) FROM unnest(%(buckets)s::float8[]) AS b(le) WHERE b.le < o.seconds),
           count(*)
    FROM observations o GROUP BY 1
    UNION ALL
    SELECT kind || '_sum', sum(seconds) FROM observations GROUP BY kind
    UNION ALL
    SELECT kind || '_count', count(*) FROM observations GROUP BY kind
), totals AS (
    INSERT INTO metrics_totals (name, value)
    SELECT name, sum(value) FROM observed GROUP BY name
    ON CONFLICT (name) DO UPDATE SET value = metrics_totals.value + excluded.value
), moved AS (
    UPDATE metrics_horizon SET folded_below = %(hi)s
)
SELECT count(*) FROM folded;

-- metrics_totals_many --
-- The folded totals (name, value).
SELECT name, value FROM metrics_totals;

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

-- report_job_one --
-- The facts of one job of the user for its report: status, judge, retrieval mode, times,
-- the thesis (file name, pages) and the job's sources as a JSON array. No row: no such job
-- of this user.
SELECT j.id, j.status::text, j.delta_of_job_id, j.judge, j.retrieval_mode, j.created_at, j.started_at,
       j.finished_at, j.failure_reason, t.id, t.filename, t.pages,
       coalesce((SELECT jsonb_agg(jsonb_build_object('id', d.id, 'filename', d.filename, 'doi', d.doi,
                                                     'pages', d.pages) ORDER BY d.id)
                 FROM analysis_job_documents jd
                 JOIN documents d ON d.id = jd.document_id AND d.user_id = j.user_id
                 WHERE jd.job_id = j.id AND d.id <> j.thesis_id), '[]'::jsonb)
FROM analysis_jobs j JOIN documents t ON t.id = j.thesis_id
WHERE j.id = %(job_id)s AND j.user_id = %(user_id)s;

-- report_counts_many --
-- Citations of one job of the user per verdict ('pending' while unjudged).
SELECT coalesce(c.verdict::text, 'pending'), count(*)::int
FROM job_citations c
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s
GROUP BY 1;

-- report_attention_many --
-- The citation numbers (1, 2, ...) of one job of the user per verdict that needs a look, in
-- thesis order: the "needs attention" block of a streamed report, whose head has no citations.
SELECT c.verdict::text, array_agg(c.ordinal + 1 ORDER BY c.ordinal)
FROM job_citations c
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s
  AND c.verdict IN ('not_supported', 'partially_supported', 'uncertain', 'source_missing')
GROUP BY 1;

-- report_references_many --
-- The distinct (source, reference, match method) of one job of the user's resolved
-- citations, in the order of their first citation.
SELECT c.source_document_id, c.reference ->> 'raw', c.match_method
FROM job_citations c
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s AND c.source_document_id IS NOT NULL
GROUP BY 1, 2, 3
ORDER BY min(c.ordinal);

-- report_citations_page_many --
-- At most %(size)s citations of one job of the user after ordinal %(after)s, in thesis order:
-- the rows of report_citations_many, a page at a time (keyset on (job_id, ordinal)).
SELECT c.ordinal, c.marker, c.claim, c.page, c.source_document_id, d.filename, c.reference ->> 'raw',
       c.match_method, c.unresolved_reason, c.verdict::text, c.confidence::float8, c.evidence,
       c.evidence_page, c.rationale, c.carried_from_id, c.judged_at, c.judge_rule
FROM job_citations c
LEFT JOIN documents d ON d.id = c.source_document_id AND d.user_id = c.user_id
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s AND c.ordinal > %(after)s
ORDER BY c.ordinal
LIMIT %(size)s;

-- report_citations_many --
-- Every citation of one job of the user in thesis order, with its cited source's file name,
-- the reference it was resolved through (or why not) and its verdict (NULL while unjudged).
SELECT c.ordinal, c.marker, c.claim, c.page, c.source_document_id, d.filename, c.reference ->> 'raw',
       c.match_method, c.unresolved_reason, c.verdict::text, c.confidence::float8, c.evidence,
       c.evidence_page, c.rationale, c.carried_from_id, c.judged_at, c.judge_rule
FROM job_citations c
LEFT JOIN documents d ON d.id = c.source_document_id AND d.user_id = c.user_id
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s
ORDER BY c.ordinal;

-- job_active_ids_many --
-- The analyses running or pending (message sent, waiting for a worker), oldest first: the
-- operator's "running analyses" (reads the partial index of active jobs).
SELECT id FROM analysis_jobs
WHERE status IN ('running', 'pending')
ORDER BY status DESC, id
LIMIT %(limit)s;

-- citation_evidence_one --
-- One citation of one job of the user, with what is needed to show it in place: the claim,
-- its sentence and thesis page, the quoted evidence and its source page, and the sentence
-- for each part of a claim judged in parts. No row: no such citation of this user.
SELECT c.ordinal, c.verdict::text, c.claim, c.sentence, c.page, j.thesis_id, c.source_document_id,
       c.evidence, c.evidence_page, c.evidence_parts
FROM job_citations c JOIN analysis_jobs j ON j.id = c.job_id AND j.user_id = c.user_id
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s AND c.ordinal = %(ordinal)s;

-- document_page_blocks_one --
-- One page of a document of the user as its reader structured it: headings and paragraphs
-- that start on the page or run on to it, in reading order (from documents.structure; only
-- that page's entries leave the server), the page's plain text (the fallback for documents
-- stored without a structure) and the document's page count.
SELECT d.filename,
       (SELECT p.text FROM document_pages p WHERE p.document_id = d.id AND p.page = %(page)s),
       (SELECT coalesce(jsonb_agg(b.block ORDER BY b.position), '[]'::jsonb) FROM (
            SELECT jsonb_build_object('kind', 'heading', 'text', h ->> 'text') AS block,
                   (h ->> 'position')::int AS position
            FROM jsonb_array_elements(coalesce(d.structure -> 'headings', '[]'::jsonb)) h
            WHERE (h ->> 'page')::int = %(page)s
            UNION ALL
            SELECT jsonb_build_object('kind', 'paragraph', 'text', g ->> 'text'), (g ->> 'position')::int
            FROM jsonb_array_elements(coalesce(d.structure -> 'paragraphs', '[]'::jsonb)) g
            WHERE (g ->> 'page')::int = %(page)s
               OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(g -> 'breaks', '[]'::jsonb)) br
                          WHERE (br ->> 1)::int = %(page)s)) b),
       (SELECT max(p.page) FROM document_pages p WHERE p.document_id = d.id)
FROM documents d WHERE d.id = %(document_id)s AND d.user_id = %(user_id)s;
