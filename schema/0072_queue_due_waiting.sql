-- Whether a due message of a queue is waiting (besides the ids given): the wake-up probe of
-- batch sends and promotions (messages_insert_many, grouped_messages_insert_many,
-- grouped_messages_finish_many, grouped_messages_exchange_many, grouped_messages_release_many).
--
-- Asked across priorities, the claim index bounds no eta, and before PostgreSQL 18 the probe
-- read every delayed message of the queue whenever none was due. It walks the priorities
-- (citeq_queued_priorities, schema/0071), each probe bounded by the eta. In a function, as
-- the grouped sends' look-ups are (schema/0070): a statement's plan made while citeq_messages
-- was empty read the walk's first step by a sequential scan and a sort, whose generic plan the
-- sending connection kept (3,012 rows read per batch send beside a backlog of 3,000); the
-- function's SET clauses hold for its own queries only. A generic plan from the first call:
-- a custom plan is made anew on each of a connection's first five calls, and its estimate
-- of "eta <= now()" reads the ends of the claim index (33 pages a call instead of 12).
-- STABLE: it reads the calling statement's snapshot, so a send's probe does not see the
-- messages that statement inserts.
CREATE FUNCTION citeq_queue_due_waiting(queue text, besides bigint[] DEFAULT '{}') RETURNS boolean
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM citeq_queued_priorities(queue) AS p(priority)
        CROSS JOIN LATERAL (
            SELECT 1 FROM citeq_messages m
            WHERE m.state = 'queued' AND m.queue_name = queue AND m.priority = p.priority
              AND m.eta <= now() AND m.id <> ALL (besides)
            LIMIT 1) AS waiting);
END
$$;
