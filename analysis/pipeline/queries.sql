-- Named queries of the analysis pipeline (uploads, parsing, the source store, extraction,
-- judging, the pipeline's sweeps, the rate-limiter backend), loaded by analysis/db.py
-- together with queue/queries.sql and surface/queries.sql. Same rules: "-- name --", a one-line description,
-- %(named)s parameters, names entity first ending in how many rows come back, guarded
-- transitions whose zero rows the caller handles.

-- upload_session_create_one --
-- A new upload session of a user.
INSERT INTO upload_sessions (user_id) VALUES (%(user_id)s) RETURNING id;

-- upload_session_get_one --
-- A session, only if it belongs to the user (a guessed id of another user finds nothing).
SELECT id, sources_version FROM upload_sessions WHERE id = %(session_id)s AND user_id = %(user_id)s;

-- upload_facts_one --
-- What the upload caps check, under the user's upload lock: active parse jobs and bytes
-- still staged, each with the live upload reservations of the user (uploads whose bodies
-- are being received) other than the one given.
SELECT
    (SELECT count(*) FROM parse_jobs
     WHERE user_id = %(user_id)s AND is_busy(status))::int
    + (SELECT count(*) FROM upload_reservations
       WHERE user_id = %(user_id)s AND expires_at > now() AND id IS DISTINCT FROM %(reservation_id)s)::int
      AS active_jobs,
    (SELECT coalesce(sum(size_bytes), 0) FROM parse_items
     WHERE user_id = %(user_id)s AND file_bytes IS NOT NULL)::bigint
    + (SELECT coalesce(sum(bytes), 0) FROM upload_reservations
       WHERE user_id = %(user_id)s AND expires_at > now() AND id IS DISTINCT FROM %(reservation_id)s)::bigint
      AS staged_bytes;

-- upload_reservation_insert_one --
-- Under the user's upload lock, after upload_facts_one allowed it: reserve a parse slot and
-- bytes for an upload whose body is about to be read (dropping the user's expired ones).
WITH expired AS (
    DELETE FROM upload_reservations WHERE user_id = %(user_id)s AND expires_at <= now()
)
INSERT INTO upload_reservations (user_id, bytes, expires_at)
VALUES (%(user_id)s, %(bytes)s, now() + %(seconds)s * interval '1 second')
RETURNING id;

-- upload_reservation_delete_one --
-- Drop a reservation (its upload was staged, refused or abandoned); no row if it is gone already.
DELETE FROM upload_reservations WHERE id = %(reservation_id)s RETURNING id;

-- parse_job_insert_one --
-- Stage a parse job with all its items in one statement. The bytes were written as large
-- objects (in chunks, by uploads.py) and are copied into file_bytes here, server-side;
-- large_objects_unlink_many drops the objects in the same transaction.
WITH job AS (
    INSERT INTO parse_jobs (user_id, session_id, message_id)
    VALUES (%(user_id)s, %(session_id)s, %(message_id)s)
    RETURNING id, user_id
), items AS (
    INSERT INTO parse_items (job_id, user_id, ordinal, filename, kind, doi, size_bytes, sha256, file_bytes)
    SELECT job.id, job.user_id, f.ordinal, f.filename, f.kind::document_kind, f.doi,
           f.size, f.sha256, lo_get(f.oid)
    FROM job, unnest(%(filenames)s::text[], %(kinds)s::text[], %(dois)s::text[], %(sha256s)s::text[],
                     %(oids)s::oid[], %(sizes)s::bigint[])
              WITH ORDINALITY AS f(filename, kind, doi, sha256, oid, size, ordinal)
)
SELECT id FROM job;

-- large_object_create_one --
-- A new large object holding an upload's first chunk; its oid.
SELECT lo_from_bytea(0, %(data)s);

-- large_object_put_one --
-- Write the next chunk of an upload at its offset.
SELECT lo_put(%(oid)s, %(offset)s, %(data)s);

-- large_objects_unlink_many --
-- Drop the large objects an upload was staged through (their bytes are in parse_items now).
SELECT lo_unlink(o) FROM unnest(%(oids)s::oid[]) AS o;

-- parse_job_get_one --
-- A parse job of the user, with its counts per item status.
SELECT j.id, j.session_id, j.status::text, j.created_at, j.finished_at
FROM parse_jobs j WHERE j.id = %(job_id)s AND j.user_id = %(user_id)s;

-- parse_items_of_job_many --
-- The items of a parse job, in upload order.
SELECT id, ordinal, filename, kind::text, size_bytes, status::text, error_code, error_reason, document_id,
       file_bytes IS NOT NULL AS staged
FROM parse_items WHERE job_id = %(job_id)s ORDER BY ordinal;

-- workers_serving_queue_many --
-- Worker processes that serve a queue and were heard from recently (heartbeat rows).
SELECT worker_id, hostname, pid, last_seen_at FROM citeq_workers
WHERE %(queue_name)s = ANY(queues)
  AND last_seen_at > now() - %(stale_seconds)s * interval '1 second'
ORDER BY last_seen_at DESC;

-- parse_job_start_one --
-- A worker starts (or, after a crash, resumes) a parse job. No row: it is finished.
UPDATE parse_jobs SET status = 'running', started_at = coalesce(started_at, clock_timestamp())
WHERE id = %(job_id)s AND is_busy(status)
RETURNING user_id, session_id;

-- parse_item_claim_one --
-- The next unfinished item of a job, in upload order, with one more attempt counted. An
-- item found 'running' was being parsed by a worker that died.
UPDATE parse_items SET status = 'running', attempts = attempts + 1
WHERE id = (SELECT id FROM parse_items
            WHERE job_id = %(job_id)s AND is_busy(status)
            ORDER BY ordinal LIMIT 1
            FOR UPDATE SKIP LOCKED)
RETURNING id, filename, kind::text, doi, sha256, octet_length(file_bytes), attempts;

-- parse_item_bytes_slice_one --
-- %(length)s bytes of a staged item from byte %(start)s (1-based): the parse step copies an
-- upload to a file a slice at a time, so the worker never holds it whole. NULL: the bytes
-- are gone (the item ended meanwhile).
SELECT substring(file_bytes FROM %(start)s FOR %(length)s) FROM parse_items WHERE id = %(item_id)s;

-- document_insert_one --
-- The parsed document of an item, with its structure (headings, paragraphs, footnotes).
INSERT INTO documents (user_id, kind, filename, status, doi, session_id, pages, size_bytes, sha256, metadata,
                       structure)
VALUES (%(user_id)s, %(kind)s::document_kind, %(filename)s, 'parsed', %(doi)s, %(session_id)s, %(pages)s,
        %(size_bytes)s, %(sha256)s, %(metadata)s::jsonb, %(structure)s::jsonb)
RETURNING id;

-- document_pages_insert --
-- The pages of a document as extracted.
INSERT INTO document_pages (document_id, page, text)
SELECT %(document_id)s, p.page, p.text FROM unnest(%(pages)s::int[], %(texts)s::text[]) AS p(page, text);

-- chunks_insert --
-- The retrieval passages of a document. Embeddings come as '{...}' literals (NULL for
-- none): unnest would flatten a two-dimensional array into single numbers.
INSERT INTO chunks (document_id, user_id, ordinal, page, text, embedding)
SELECT %(document_id)s, %(user_id)s, c.ordinal, c.page, c.text, c.embedding::real[]
FROM unnest(%(ordinals)s::int[], %(pages)s::int[], %(texts)s::text[], %(embeddings)s::text[])
     AS c(ordinal, page, text, embedding);

-- session_source_link_one --
-- Offer a source document in the session; the version tells cached indexes they are stale.
WITH linked AS (
    INSERT INTO session_sources (session_id, document_id, user_id)
    VALUES (%(session_id)s, %(document_id)s, %(user_id)s)
    ON CONFLICT DO NOTHING
    RETURNING session_id
)
UPDATE upload_sessions s SET sources_version = sources_version + 1
FROM linked WHERE s.id = linked.session_id
RETURNING s.sources_version;

-- parse_item_parsed_one --
-- An item's document exists: parsed, bytes dropped. Guarded on the attempt, so a zombie
-- worker's late finish (its item was claimed again meanwhile) matches no row.
UPDATE parse_items SET status = 'parsed', document_id = %(document_id)s, file_bytes = NULL,
                       finished_at = clock_timestamp()
WHERE id = %(item_id)s AND status = 'running' AND attempts = %(attempts)s
RETURNING id;

-- parse_item_fail_one --
-- An item failed with a reason a user can act on; bytes dropped.
UPDATE parse_items SET status = 'failed', error_code = %(code)s, error_reason = %(reason)s,
                       file_bytes = NULL, finished_at = clock_timestamp()
WHERE id = %(item_id)s AND status = 'running' AND attempts = %(attempts)s
RETURNING id;

-- parse_job_finish_one --
-- Once no item is left to parse, the job ends: succeeded, partial or failed by its items.
WITH counts AS (
    SELECT count(*) FILTER (WHERE is_busy(status)) AS open,
           count(*) FILTER (WHERE status = 'parsed') AS parsed,
           count(*) FILTER (WHERE status = 'failed') AS failed
    FROM parse_items WHERE job_id = %(job_id)s
)
UPDATE parse_jobs j
SET status = CASE WHEN counts.failed = 0 THEN 'succeeded'
                  WHEN counts.parsed = 0 THEN 'failed'
                  ELSE 'partial' END::parse_job_status,
    finished_at = clock_timestamp()
FROM counts
WHERE j.id = %(job_id)s AND is_busy(j.status) AND counts.open = 0
RETURNING j.status::text;

-- parse_items_expire_many --
-- Blob TTL: items still holding bytes after the TTL fail and drop them (terminal items
-- never hold bytes). Batched; SKIP LOCKED lets a worker parsing one of them finish first.
WITH old AS (
    SELECT id FROM parse_items
    WHERE file_bytes IS NOT NULL
      AND created_at < coalesce(%(now)s, now()) - %(ttl_seconds)s * interval '1 second'
    ORDER BY created_at LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE parse_items i
SET status = 'failed', file_bytes = NULL, finished_at = clock_timestamp(), error_code = 'expired',
    error_reason = 'the upload waited too long to be parsed; upload it again'
FROM old WHERE i.id = old.id
RETURNING i.job_id;

-- parse_jobs_stalled_many --
-- Unfinished parse jobs whose message is neither queued nor running (lost, or dead after
-- its workers kept dying) and that are older than the grace period.
SELECT j.id, j.message_id FROM parse_jobs j
WHERE is_busy(j.status)
  AND j.created_at < coalesce(%(now)s, now()) - %(grace_seconds)s * interval '1 second'
  AND NOT EXISTS (SELECT 1 FROM citeq_messages m
                  WHERE m.message_id = j.message_id AND m.state IN ('queued', 'running'))
ORDER BY j.id
LIMIT %(limit)s;

-- parse_job_resend_one --
-- Give a stalled parse job a new message id; guarded on the old one (two sweepers).
UPDATE parse_jobs SET message_id = %(message_id)s
WHERE id = %(job_id)s AND is_busy(status) AND message_id = %(old_message_id)s
RETURNING id;

-- session_version_one --
-- The version of a session's set of sources, only for its owner.
SELECT sources_version FROM upload_sessions WHERE id = %(session_id)s AND user_id = %(user_id)s;

-- session_chunks_many --
-- Every passage of the sources linked to a session, only the user's own; with its
-- embedding when the worker ranks vectors itself (no pgvector).
SELECT c.id, c.document_id, c.page, c.text, CASE WHEN %(with_embeddings)s THEN c.embedding END
FROM session_sources s
JOIN chunks c ON c.document_id = s.document_id AND c.user_id = %(user_id)s
WHERE s.session_id = %(session_id)s AND s.user_id = %(user_id)s
ORDER BY c.document_id, c.ordinal;

-- document_chunks_many --
-- The passages of one document of the user (a source outside any session).
SELECT id, document_id, page, text, CASE WHEN %(with_embeddings)s THEN embedding END FROM chunks
WHERE document_id = %(document_id)s AND user_id = %(user_id)s
ORDER BY ordinal;

-- session_reset_one --
-- An explicit user reset: unlink every source of the session.
WITH unlinked AS (
    DELETE FROM session_sources WHERE session_id = %(session_id)s AND user_id = %(user_id)s
    RETURNING session_id
)
UPDATE upload_sessions SET sources_version = sources_version + 1, reset_at = now()
WHERE id = %(session_id)s AND user_id = %(user_id)s
RETURNING (SELECT count(*) FROM unlinked)::int;

-- session_documents_many --
-- The parsed documents of a session (what an analysis is admitted with).
SELECT d.id, d.kind::text, d.filename, d.status::text FROM documents d
WHERE d.session_id = %(session_id)s AND d.user_id = %(user_id)s
ORDER BY d.id;

-- document_pages_many --
-- The pages of one document of the user.
SELECT p.page, p.text FROM document_pages p JOIN documents d ON d.id = p.document_id
WHERE p.document_id = %(document_id)s AND d.user_id = %(user_id)s
ORDER BY p.page;

-- document_structure_one --
-- The stored structure of one document of the user (NULL: parsed before there was one).
SELECT d.structure FROM documents d WHERE d.id = %(document_id)s AND d.user_id = %(user_id)s;

-- job_sources_many --
-- The source documents an analysis was admitted with: what references are matched against,
-- with the text of their first two pages (a title page can push the authors to page two).
SELECT d.id, d.filename,
       coalesce((SELECT string_agg(p.text, E'\n' ORDER BY p.page) FROM document_pages p
                 WHERE p.document_id = d.id AND p.page <= 2), ''),
       d.doi, d.metadata, d.session_id, d.sha256
FROM analysis_job_documents jd
JOIN analysis_jobs j ON j.id = jd.job_id
JOIN documents d ON d.id = jd.document_id AND d.user_id = j.user_id AND d.kind = 'source'
WHERE jd.job_id = %(job_id)s
ORDER BY d.id;

-- job_extracted_one --
-- Record the extraction of a running job once: the citation count and how many still
-- need a judge. No row: extracted already (a re-delivered analyze message).
UPDATE analysis_jobs
SET extracted_at = clock_timestamp(), citations_total = %(total)s, pending_citations = %(pending)s,
    retrieval_mode = %(retrieval_mode)s, judge = %(judge)s
WHERE id = %(job_id)s AND status = 'running' AND extracted_at IS NULL
RETURNING id;

-- job_extraction_one --
-- What the extraction recorded (for a re-delivered analyze message).
SELECT extracted_at IS NOT NULL, pending_citations FROM analysis_jobs WHERE id = %(job_id)s;

-- citations_insert --
-- The citations of an analysis; copied verdicts come with their judged_at.
INSERT INTO job_citations (job_id, user_id, ordinal, claim, sentence, marker, page, reference_key, reference,
                           source_document_id, message_id, dispatches, verdict, confidence, evidence,
                           evidence_page, rationale, carried_from_id, judged_at, match_method, unresolved_reason,
                           judge_rule, evidence_parts)
SELECT %(job_id)s, %(user_id)s, c.ordinal, c.claim, c.sentence, c.marker, c.page, c.reference_key,
       c.reference::jsonb, c.source_document_id, c.message_id, CASE WHEN c.message_id IS NULL THEN 0 ELSE 1 END,
       c.verdict::citation_verdict, c.confidence, c.evidence, c.evidence_page, c.rationale, c.carried_from_id,
       CASE WHEN c.verdict IS NOT NULL THEN clock_timestamp() END, c.match_method, c.unresolved_reason,
       c.judge_rule, c.evidence_parts::jsonb
FROM unnest(%(ordinals)s::int[], %(claims)s::text[], %(sentences)s::text[], %(markers)s::text[],
            %(pages)s::int[], %(reference_keys)s::text[], %(references)s::text[],
            %(source_document_ids)s::bigint[], %(message_ids)s::text[], %(verdicts)s::text[],
            %(confidences)s::real[], %(evidences)s::text[], %(evidence_pages)s::int[], %(rationales)s::text[],
            %(carried_from_ids)s::bigint[], %(match_methods)s::text[], %(unresolved_reasons)s::text[],
            %(judge_rules)s::text[], %(evidence_parts)s::text[])
     AS c(ordinal, claim, sentence, marker, page, reference_key, reference, source_document_id, message_id,
          verdict, confidence, evidence, evidence_page, rationale, carried_from_id, match_method,
          unresolved_reason, judge_rule, evidence_parts);

-- base_citations_many --
-- The citations of a delta re-check's base job, with the content hash of their source.
SELECT c.id, c.ordinal, c.claim, c.marker, c.source_document_id, d.sha256, c.verdict::text, c.confidence,
       c.evidence, c.evidence_page, c.rationale, c.judge_rule, c.evidence_parts
FROM job_citations c LEFT JOIN documents d ON d.id = c.source_document_id
WHERE c.job_id = %(job_id)s AND c.user_id = %(user_id)s
ORDER BY c.ordinal;

-- document_hashes_many --
-- Content hashes of the user's documents.
SELECT id, sha256 FROM documents WHERE user_id = %(user_id)s AND id = ANY(%(ids)s::bigint[]);

-- citation_to_judge_one --
-- A citation that still needs its verdict, of a running job; no row: nothing to do. With it,
-- the claims of the job's citations in [window_start, window_end) that have a source and no
-- verdict yet: the local embedder embeds them in one batch with this one (analyze.retrieve).
SELECT c.id, c.user_id, c.claim, c.marker, c.source_document_id, d.session_id,
       ARRAY(SELECT w.claim FROM job_citations w
             WHERE w.job_id = c.job_id AND w.ordinal >= %(window_start)s AND w.ordinal < %(window_end)s
               AND w.ordinal <> c.ordinal AND w.verdict IS NULL AND w.source_document_id IS NOT NULL
             ORDER BY w.ordinal) AS window_claims
FROM job_citations c
JOIN analysis_jobs j ON j.id = c.job_id AND j.status = 'running'
LEFT JOIN documents d ON d.id = c.source_document_id AND d.user_id = c.user_id
WHERE c.job_id = %(job_id)s AND c.ordinal = %(ordinal)s AND c.verdict IS NULL;

-- citation_judge_one --
-- Write a verdict at most once (WHERE verdict IS NULL) and count it off the job in the
-- same statement. The remaining count comes back: zero means this judge was the last and
-- completes the job (in the same transaction). No row: judged already or the job ended.
SET LOCAL synchronous_commit = off;
WITH judged AS (
    UPDATE job_citations c
    SET verdict = %(verdict)s::citation_verdict, confidence = %(confidence)s, evidence = %(evidence)s,
        evidence_page = %(evidence_page)s, rationale = %(rationale)s, judge_rule = %(rule)s,
        evidence_parts = %(evidence_parts)s::jsonb, judged_at = clock_timestamp()
    FROM analysis_jobs j
    WHERE c.job_id = %(job_id)s AND c.ordinal = %(ordinal)s AND c.verdict IS NULL
      AND j.id = c.job_id AND j.status = 'running'
    RETURNING c.job_id
)
UPDATE analysis_jobs j SET pending_citations = j.pending_citations - 1,
    provider_failing_since = CASE WHEN %(provider_answered)s THEN NULL ELSE j.provider_failing_since END
FROM judged WHERE j.id = judged.job_id
RETURNING j.pending_citations;

-- job_provider_failing_one --
-- A transient provider failure of a running job: when the provider started failing it (kept
-- from an earlier failure with no provider verdict since) and the seconds since. No row:
-- the job is not running.
UPDATE analysis_jobs
SET provider_failing_since = coalesce(provider_failing_since, coalesce(%(now)s, clock_timestamp()))
WHERE id = %(job_id)s AND status = 'running'
RETURNING extract(epoch FROM coalesce(%(now)s, clock_timestamp()) - provider_failing_since)::float8;

-- job_judge_tokens_one --
-- The provider tokens a job's judge calls have cost so far.
SELECT judge_tokens_used FROM analysis_jobs WHERE id = %(job_id)s;

-- job_judge_tokens_add_one --
-- Count the tokens one judgement cost against its job; the job's new total.
UPDATE analysis_jobs SET judge_tokens_used = judge_tokens_used + %(tokens)s
WHERE id = %(job_id)s
RETURNING judge_tokens_used;

-- citations_of_job_many --
-- The citations of a job of the user, in reading order.
SELECT ordinal, claim, marker, page, source_document_id, verdict::text, confidence, evidence, evidence_page,
       rationale, carried_from_id IS NOT NULL, judged_at, judge_rule
FROM job_citations WHERE job_id = %(job_id)s AND user_id = %(user_id)s
ORDER BY ordinal;

-- citations_stalled_many --
-- Unjudged citations of running jobs whose judge message is neither queued nor running
-- (lost, or dead after its retries), older than the grace period.
SELECT c.job_id, c.ordinal, c.message_id, c.dispatches, j.user_id
FROM job_citations c JOIN analysis_jobs j ON j.id = c.job_id AND j.status = 'running'
WHERE c.verdict IS NULL
  AND j.extracted_at < coalesce(%(now)s, now()) - %(grace_seconds)s * interval '1 second'
  AND NOT EXISTS (SELECT 1 FROM citeq_messages m
                  WHERE m.message_id = c.message_id AND m.state IN ('queued', 'running'))
ORDER BY c.job_id, c.ordinal
LIMIT %(limit)s;

-- citation_resend_one --
-- Give a stalled citation a new judge message; guarded on the old id (two sweepers).
UPDATE job_citations SET message_id = %(message_id)s, dispatches = dispatches + 1
WHERE job_id = %(job_id)s AND ordinal = %(ordinal)s AND verdict IS NULL
  AND message_id IS NOT DISTINCT FROM %(old_message_id)s
RETURNING dispatches;

-- pgvector_available_one --
-- Whether the pgvector extension is installed in this database.
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector');

-- job_sources_embedded_one --
-- The source documents of an analysis, and how many of them have embedded passages.
SELECT count(*)::int,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id
                                      AND c.user_id = d.user_id AND c.embedding IS NOT NULL))::int
FROM analysis_job_documents jd
JOIN analysis_jobs j ON j.id = jd.job_id
JOIN documents d ON d.id = jd.document_id AND d.user_id = j.user_id AND d.kind = 'source'
WHERE jd.job_id = %(job_id)s;

-- chunks_nearest_many --
-- pgvector only (the cast needs the extension): the user's passages of one document
-- nearest a claim's embedding by cosine, best first. Within a session, only while the
-- document is linked to it, as the session's BM25 index sees it.
SELECT c.id, c.document_id, c.page, c.text,
       1 - (c.embedding::vector <=> %(embedding)s::real[]::vector) AS similarity
FROM chunks c
WHERE c.document_id = %(document_id)s AND c.user_id = %(user_id)s AND c.embedding IS NOT NULL
  AND cardinality(c.embedding) = cardinality(%(embedding)s::real[])
  AND (%(session_id)s::bigint IS NULL OR EXISTS (
        SELECT 1 FROM session_sources s
        WHERE s.session_id = %(session_id)s AND s.document_id = c.document_id AND s.user_id = %(user_id)s))
ORDER BY c.embedding::vector <=> %(embedding)s::real[]::vector, c.ordinal
LIMIT %(k)s;

-- provider_budget_spend_one --
-- Count calls against today's budget of a provider. True when they fit, or when the
-- provider has no limit set for today (unlimited); false when the budget is spent.
WITH spent AS (
    UPDATE provider_daily_budget SET calls_used = calls_used + %(calls)s
    WHERE provider = %(provider)s AND day = (now() AT TIME ZONE 'utc')::date
      AND calls_used + %(calls)s <= call_limit
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM spent)
    OR NOT EXISTS (SELECT 1 FROM provider_daily_budget
                   WHERE provider = %(provider)s AND day = (now() AT TIME ZONE 'utc')::date);

-- provider_slot_take_one --
-- Take the lowest free slot of a provider's %(slots)s, or none (callers hold the provider's
-- lock). Free: no row, an expired row, a registered holder whose worker heartbeat is older
-- than the lease (a SIGKILLed process; a pruned worker row counts as lapsed too), or a row
-- of this very holder that it no longer holds (%(mine)s: a release lost to a database blip).
WITH held AS (
    SELECT s.slot FROM provider_slots s
    LEFT JOIN citeq_workers w ON w.worker_id = s.holder
    WHERE s.provider = %(provider)s AND s.expires_at > clock_timestamp()
      AND (NOT s.registered OR w.last_seen_at > clock_timestamp() - %(lease_seconds)s * interval '1 second')
      AND (s.holder <> %(holder)s OR s.token = ANY (%(mine)s::uuid[]))
), free AS (
    SELECT n FROM generate_series(0, %(slots)s - 1) AS n
    WHERE n NOT IN (SELECT slot FROM held)
    ORDER BY n LIMIT 1
)
INSERT INTO provider_slots AS s (provider, slot, holder, registered, token, expires_at)
SELECT %(provider)s, n, %(holder)s, EXISTS (SELECT 1 FROM citeq_workers WHERE worker_id = %(holder)s),
       gen_random_uuid(), clock_timestamp() + %(ttl_seconds)s * interval '1 second'
FROM free
ON CONFLICT (provider, slot) DO UPDATE
SET holder = excluded.holder, registered = excluded.registered, token = excluded.token,
    acquired_at = clock_timestamp(), expires_at = excluded.expires_at
RETURNING slot, token::text;

-- provider_slot_release_one --
-- Give a slot back; fenced by its token (a slot taken over meanwhile stays with its taker).
DELETE FROM provider_slots
WHERE provider = %(provider)s AND slot = %(slot)s AND token = %(token)s::uuid
RETURNING slot;

-- provider_slots_held_many --
-- The slots of a provider and whether each one's holder counts as alive (tests, operators).
SELECT s.slot, s.holder,
       s.expires_at > clock_timestamp()
       AND (NOT s.registered OR w.last_seen_at > clock_timestamp() - %(lease_seconds)s * interval '1 second')
FROM provider_slots s LEFT JOIN citeq_workers w ON w.worker_id = s.holder
WHERE s.provider = %(provider)s
ORDER BY s.slot;

-- citation_requeue_one --
-- A judge message that found every provider slot taken hands its citation to a new message
-- (sent in the same transaction) without counting a dispatch: waiting is not a failure.
UPDATE job_citations SET message_id = %(message_id)s
WHERE job_id = %(job_id)s AND ordinal = %(ordinal)s AND verdict IS NULL
RETURNING ordinal;

-- source_sentences_insert --
-- The embedded sentences of a source (schema/0053). Embeddings come as '{...}' literals, as
-- in chunks_insert. A second writer of the same document and model (a lazy fill racing
-- another, or the parse) changes nothing.
INSERT INTO source_sentences (document_id, user_id, model, ordinal, page, text, embedding)
SELECT %(document_id)s, %(user_id)s, %(model)s, s.ordinal, s.page, s.text, s.embedding::real[]
FROM unnest(%(ordinals)s::int[], %(pages)s::int[], %(texts)s::text[], %(embeddings)s::text[])
     AS s(ordinal, page, text, embedding)
ON CONFLICT DO NOTHING;

-- source_sentences_many --
-- Every embedded sentence of one document of the user, by one model, in reading order.
SELECT ordinal, page, text, embedding FROM source_sentences
WHERE document_id = %(document_id)s AND user_id = %(user_id)s AND model = %(model)s
ORDER BY ordinal;

-- source_sentences_embedded_one --
-- Whether the sentences of one document of the user were embedded by this model.
SELECT EXISTS (SELECT 1 FROM source_sentences
               WHERE document_id = %(document_id)s AND user_id = %(user_id)s AND model = %(model)s);

-- source_sentence_nearest_one --
-- pgvector only (the cast needs the extension): the sentence of one document of the user
-- nearest a claim's embedding by cosine; reading order breaks ties.
SELECT ordinal, page, text, 1 - (embedding::vector <=> %(embedding)s::real[]::vector) AS similarity
FROM source_sentences
WHERE document_id = %(document_id)s AND user_id = %(user_id)s AND model = %(model)s
  AND cardinality(embedding) = cardinality(%(embedding)s::real[])
ORDER BY embedding::vector <=> %(embedding)s::real[]::vector, ordinal
LIMIT 1;

-- document_page_chunks_many --
-- The passages of one page of a document of the user, in order: where a sentence of that
-- page is found among the passages.
SELECT id, document_id, page, text FROM chunks
WHERE document_id = %(document_id)s AND user_id = %(user_id)s AND page = %(page)s
ORDER BY ordinal;
