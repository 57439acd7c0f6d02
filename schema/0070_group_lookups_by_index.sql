-- A grouped send's lookups read by index, whatever the statistics said when their plans were
-- made: the place its message already has in its key (a retry keeps its first send's
-- group_seq: grouped_message_insert_one) and, for a batch, whether its key holds messages
-- back and how many hold a slot (grouped_messages_insert_many), now functions, and
-- citeq_group_has_room (schema/0068), which admissions call too.
--
-- A sending connection keeps its plans. Made while citeq_messages was empty (a new install,
-- or pruning and autovacuum after a quiet spell), the statement's plan read the whole table
-- for the first lookup on every grouped send, until autovacuum's next ANALYZE: 390-1,250 us
-- of server CPU per send over the first 5,000-8,000 sends into an emptied table, 210-345
-- after (scripts/bench_send.py --emptied); citeq_group_has_room's plans, kept for the session
-- by PL/pgSQL, could read it twice more. A function's SET clauses hold while it runs, for its
-- own queries only (no caller's transaction sees them), so its plans read an index; jit off
-- as wherever a plan type is turned off (before PostgreSQL 18 a disabled node adds 1e10 to a
-- plan's cost, past every JIT threshold).
CREATE FUNCTION citeq_group_seq_of(message text, queue text, key text) RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
    -- A retry is sent while the message it retries still runs: never 'done', so this reads
    -- the live rows' message_id index (or the key's in-flight ones), not the whole table.
    RETURN (SELECT min(group_seq) FROM citeq_messages
            WHERE message_id = message AND state <> 'done' AND queue_name = queue AND group_key = key);
END
$$;

CREATE FUNCTION citeq_group_holds_back(queue text, key text) RETURNS boolean
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM citeq_messages WHERE state = 'held' AND queue_name = queue AND group_key = key);
END
$$;

-- The key's messages that hold a slot (citeq_group_has_room's predicate, uncapped).
CREATE FUNCTION citeq_group_busy(queue text, key text) RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
    RETURN (SELECT count(*) FROM citeq_messages
            WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
              AND group_key IS NOT NULL AND queue_name = queue AND group_key = key);
END
$$;

ALTER FUNCTION citeq_group_has_room(text, text, integer) SET enable_seqscan = off;
ALTER FUNCTION citeq_group_has_room(text, text, integer) SET jit = off;
