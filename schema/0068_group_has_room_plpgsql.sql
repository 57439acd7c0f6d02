-- citeq_group_has_room (schema/0065) in PL/pgSQL, same predicate and same snapshot (STABLE).
--
-- As a SQL function its body has sub-selects, so PostgreSQL does not inline it, and before
-- version 18 a SQL function's query is planned again on every call: 0.7 ms per admission
-- and per grouped send on PostgreSQL 15 (job_admit_one 0.16 -> 0.86 ms and
-- grouped_message_insert_one 0.39 ms mean in pg_stat_statements, scripts/bench_queue.py).
-- PL/pgSQL keeps each query's plan for the session.
CREATE OR REPLACE FUNCTION citeq_group_has_room(queue text, key text, lim integer) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN NOT EXISTS (SELECT 1 FROM citeq_messages
                       WHERE state = 'held' AND queue_name = queue AND group_key = key)
       AND (SELECT count(*) FROM (
                SELECT 1 FROM citeq_messages
                WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
                  AND group_key IS NOT NULL AND queue_name = queue AND group_key = key
                LIMIT lim) AS f) < lim;
END
$$;
