-- The priorities of a queue's queued messages, lowest value first, one index descent each
-- (a loose scan of the claim index, citeq_messages_claim_priority: queue, priority, eta, id).
--
-- A claim takes the due messages of the lowest priority value first. Asked for across
-- priorities ("ORDER BY priority, eta, id" with "eta <= now()"), the index can bound the eta
-- only within one priority: before PostgreSQL 18 (no skip scan) a claim that found nothing
-- due read every delayed message of its queue, as did an idle consumer's look-up of the
-- next eta (20,000 messages in backoff: 133 pages a claim on PostgreSQL 16, and 770 a
-- look-up on 16 and 18, the whole table; 23 and 14 now: tests/integration/
-- test_broker_claim_plans.py). The claims (messages_exchange_many,
-- grouped_messages_exchange_many) and queue_next_eta_one now go priority by priority
-- through this function, and within a priority the eta bounds the scan.
--
-- A plain SQL function of one query, not strict, without SET clauses: the planner inlines
-- it into the statement that calls it (its plan is the statement's own, no call).
CREATE FUNCTION citeq_queued_priorities(queue text) RETURNS SETOF integer
LANGUAGE sql STABLE ROWS 3
AS $$
    WITH RECURSIVE priorities(priority) AS (
        (SELECT priority FROM citeq_messages
         WHERE state = 'queued' AND queue_name = queue ORDER BY priority LIMIT 1)
        UNION ALL
        SELECT (SELECT m.priority FROM citeq_messages m
                WHERE m.state = 'queued' AND m.queue_name = queue AND m.priority > p.priority
                ORDER BY m.priority LIMIT 1)
        FROM priorities p WHERE p.priority IS NOT NULL
    )
    SELECT priority FROM priorities WHERE priority IS NOT NULL
$$;
