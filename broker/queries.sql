-- Named queries of the broker, loaded once by broker/sql.py.
-- Every block starts with "-- name --" and a one-line description; parameters are
-- %(named)s. Python never builds SQL from strings, except the LISTEN channel, which is a
-- constant identifier (see broker/maintenance.py).
-- Names read subject first, then the verb, then how many rows come back (the scheme of
-- every queries.sql): message_insert_one, leases_reap_expired_many; a statement that
-- returns no rows has no suffix (leases_extend, queue_pause).

-- message_insert_one --
-- Enqueue one message; an idempotency key that exists already inserts nothing.
-- The wake-up is decided here, not by a trigger (a statement trigger with a transition table
-- cost a single send 70-100 us of server CPU, issue 27): a due message notifies its queue's
-- name unless a due message of the queue was already waiting (the statement's snapshot does
-- not see its own row: "waiting" means before this send). Its consumers are then either
-- claiming or full and claim with their next ack; skipping matters because a NOTIFY takes a
-- database-wide lock from pre-commit to the end of the commit, so notifying transactions
-- commit one at a time. A delayed message notifies '<queue> <seconds until its eta>'.
-- The probe's OFFSET 0 keeps it a probe (it stops at the first due message): without it, a
-- generic plan made while the table was near empty (a new install, the first sends after
-- pruning emptied the table) hashed every due message of every queue on each send until the
-- next ANALYZE: 290-1,920 us of server CPU per send over the first 9,000 sends into an emptied
-- table, 110-250 with it (scripts/bench_send.py --emptied). The other wake-up probes below
-- ask citeq_queue_due_waiting (schema/0072), whose plans read by index for the same reason.
-- The probe asks for a waiting message of the sent one's priority only: with the priority
-- fixed, the claim index (queue, priority, eta, id) bounds the eta, so the probe reads the
-- due entries and stops. Across priorities, PostgreSQL before 18 (no skip scan) read every
-- delayed message of the queue whenever none was due: 8 ms a send with 100,000 retries in
-- backoff on PostgreSQL 15. A due message of another priority still waiting only costs a
-- NOTIFY that was not needed (consumers are busy then), never a missed one.
-- @prepared
WITH inserted AS (
    INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload, eta, idempotency_key, priority)
    VALUES (%(message_id)s, %(queue_name)s, %(actor_name)s, %(payload)s,
            now() + %(delay_ms)s * interval '1 millisecond', %(idempotency_key)s, %(priority)s)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, queue_name, eta, priority
)
SELECT id,
       CASE WHEN eta > now()
            THEN pg_notify('citeq_wakeup',
                           queue_name || ' ' || greatest(extract(epoch FROM eta - clock_timestamp()), 0)::text)
            WHEN NOT EXISTS (SELECT 1 FROM citeq_messages m
                             WHERE m.state = 'queued' AND m.queue_name = inserted.queue_name
                               AND m.priority = inserted.priority AND m.eta <= now()
                             OFFSET 0)
            THEN pg_notify('citeq_wakeup', queue_name) END
FROM inserted;

-- messages_insert_many --
-- Enqueue many messages in one statement (the batch API); no idempotency keys. Wakes each
-- queue once, as message_insert_one decides it: due messages notify the queue's name unless
-- one was already waiting; delayed ones notify the earliest eta. A batch may mix priorities:
-- its probe for a waiting due message walks the queue's priorities (citeq_queue_due_waiting,
-- schema/0072: across them, PostgreSQL before 18 read every delayed message when none was
-- due), as the promotions' probes below do.
-- @prepared
WITH inserted AS (
    INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload, eta, priority)
    SELECT m.message_id, m.queue_name, m.actor_name, m.payload, now() + m.delay_ms * interval '1 millisecond',
           m.priority
    FROM unnest(%(message_ids)s::text[], %(queue_names)s::text[], %(actor_names)s::text[],
                %(payloads)s::bytea[], %(delays_ms)s::bigint[], %(priorities)s::int[])
         AS m(message_id, queue_name, actor_name, payload, delay_ms, priority)
    RETURNING queue_name, eta
), queues AS (
    SELECT queue_name, bool_or(eta <= now()) AS due, min(eta) FILTER (WHERE eta > now()) AS next_eta
    FROM inserted GROUP BY queue_name
)
SELECT CASE WHEN due AND NOT citeq_queue_due_waiting(queue_name)
            THEN pg_notify('citeq_wakeup', queue_name) END,
       CASE WHEN next_eta IS NOT NULL
            THEN pg_notify('citeq_wakeup',
                           queue_name || ' ' || greatest(extract(epoch FROM next_eta - clock_timestamp()), 0)::text)
            END
FROM queues;

-- grouped_message_insert_one --
-- Enqueue one message of a group, sent right after the key's advisory lock in the same
-- transaction: born 'queued' when its key has nothing held and fewer than its limit holding
-- a slot (citeq_group_has_room, schema/0065: queued, running, parked, or dead while its
-- release is manual), else 'held' behind them. A retry (the same message_id already in the key) keeps
-- its first send's place in the key's order, ahead of every message sent after it, so the
-- key's next promotion picks it first. A message born 'queued' wakes its queue as
-- message_insert_one decides it (its priority's due messages probed); a held one wakes nobody
-- (its promotion will).
-- @prepared
WITH inserted AS (
    INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload, eta, idempotency_key, priority,
                                state, group_key, group_limit, group_release, group_seq)
    SELECT %(message_id)s, %(queue_name)s, %(actor_name)s, %(payload)s,
           now() + %(delay_ms)s * interval '1 millisecond', %(idempotency_key)s, %(priority)s,
           CASE WHEN citeq_group_has_room(%(queue_name)s, %(group_key)s, %(group_limit)s)
                THEN 'queued' ELSE 'held' END::citeq_message_state,
           %(group_key)s, %(group_limit)s, %(group_release)s,
           -- (by index whatever this statement's plan was made on: schema/0070)
           coalesce(citeq_group_seq_of(%(message_id)s, %(queue_name)s, %(group_key)s), nextval('citeq_group_seq'))
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, queue_name, eta, state, priority
)
SELECT id,
       CASE WHEN state <> 'queued' THEN NULL
            WHEN eta > now()
            THEN pg_notify('citeq_wakeup',
                           queue_name || ' ' || greatest(extract(epoch FROM eta - clock_timestamp()), 0)::text)
            WHEN NOT EXISTS (SELECT 1 FROM citeq_messages m
                             WHERE m.state = 'queued' AND m.queue_name = inserted.queue_name
                               AND m.priority = inserted.priority AND m.eta <= now()
                             OFFSET 0)
            THEN pg_notify('citeq_wakeup', queue_name) END
FROM inserted;

-- grouped_messages_insert_many --
-- Enqueue many messages of groups in one statement (the batch API), sent right after the
-- locks of all their keys: per key, in the batch's order, as many are born 'queued' as the
-- key has room for (none when it has held messages already), the rest 'held' behind them.
-- Wakes each queue with a message born 'queued' once, as messages_insert_many decides it.
-- @prepared
WITH m AS (
    SELECT * FROM unnest(%(message_ids)s::text[], %(queue_names)s::text[], %(actor_names)s::text[],
                         %(payloads)s::bytea[], %(delays_ms)s::bigint[], %(priorities)s::int[],
                         %(group_keys)s::text[], %(group_limits)s::int[], %(group_releases)s::text[])
         WITH ORDINALITY AS m(message_id, queue_name, actor_name, payload, delay_ms, priority,
                              group_key, group_limit, group_release, ord)
), k AS (
    -- (by index whatever this statement's plan was made on: schema/0070)
    SELECT d.queue_name, d.group_key, citeq_group_holds_back(d.queue_name, d.group_key) AS held,
           citeq_group_busy(d.queue_name, d.group_key) AS busy
    FROM (SELECT DISTINCT queue_name, group_key FROM m) AS d
), ranked AS (
    SELECT m.*, k.held, k.busy,
           row_number() OVER (PARTITION BY m.queue_name, m.group_key ORDER BY m.ord) AS place
    FROM m JOIN k USING (queue_name, group_key)
), inserted AS (
    INSERT INTO citeq_messages (message_id, queue_name, actor_name, payload, eta, priority,
                                state, group_key, group_limit, group_release, group_seq)
    SELECT r.message_id, r.queue_name, r.actor_name, r.payload, now() + r.delay_ms * interval '1 millisecond',
           r.priority,
           CASE WHEN r.held OR r.place > r.group_limit - r.busy THEN 'held' ELSE 'queued' END::citeq_message_state,
           r.group_key, r.group_limit, r.group_release, nextval('citeq_group_seq')
    FROM (SELECT * FROM ranked ORDER BY ord) AS r
    RETURNING queue_name, eta, state
), queues AS (
    SELECT queue_name, bool_or(eta <= now()) AS due, min(eta) FILTER (WHERE eta > now()) AS next_eta
    FROM inserted WHERE state = 'queued' GROUP BY queue_name
)
SELECT CASE WHEN due AND NOT citeq_queue_due_waiting(queue_name)
            THEN pg_notify('citeq_wakeup', queue_name) END,
       CASE WHEN next_eta IS NOT NULL
            THEN pg_notify('citeq_wakeup',
                           queue_name || ' ' || greatest(extract(epoch FROM next_eta - clock_timestamp()), 0)::text)
            END
FROM queues;

-- message_by_idempotency_key_one --
-- The message that first claimed an idempotency key.
SELECT payload FROM citeq_messages WHERE idempotency_key = %(idempotency_key)s;

-- messages_exchange_many --
-- One round trip per consumer step: finish the acks and nacks gathered since the last
-- step, then claim up to %(limit)s due messages of the queue, lowest priority value first,
-- then oldest eta, then id. Acks and claims skip the synchronous commit: a lost ack or
-- claim after a database crash only means a re-delivery, which at-least-once delivery
-- allows anyway. Acks and nacks are fenced by lease_token, so a late ack of an expired and
-- re-delivered message matches no row.
--
-- Lock order (no deadlocks): the finished rows are locked first, in id order, and only
-- then are rows claimed, with SKIP LOCKED (a claim never waits). A late ack can wait for
-- another consumer that is claiming its row; had that consumer taken its claim locks
-- before its own acks (data-modifying CTEs run in an unspecified order; the claim ran
-- first here), two such consumers could each wait for the other.
--
-- enable_sort = off: the claim must read the queue's claim index in its order. A generic
-- plan made on statistics that saw no queued row (an ANALYZE of an idle queue, kept after
-- the next burst of sends) read every live row through the message_id index and sorted
-- them, on every claim: O(backlog) per claim, 170-256 us of PostgreSQL CPU per message in
-- the 2x4 drains of scripts/bench_profile.py that hit it, 41-50 in those that did not. The
-- other parts read rows by id (the primary key gives them in id order), and the final ORDER
-- BY, over a few rows, is sorted whatever the setting says.
--
-- jit = off wherever a statement turns a plan type off: before PostgreSQL 18 a disabled
-- node that the plan still needs (the final sort here) adds 1e10 to the plan's cost, past
-- every jit_*_above_cost, and a server built with LLVM (Debian's and PGDG's packages; jit is
-- on by default) then compiled the statement on every execution: 400-500 ms per claim on
-- PostgreSQL 15, a drain of 10 msg/s. None of these statements gains from JIT anyway.
-- @prepared
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL synchronous_commit = off;
SET LOCAL enable_sort = off;
SET LOCAL jit = off;
WITH done AS (
    SELECT a.id, a.token, NULL::text AS reason, NULL::text AS exc_type, NULL::jsonb AS exc_args, true AS acked
    FROM unnest(%(ack_ids)s::bigint[], %(ack_tokens)s::uuid[]) AS a(id, token)
    UNION ALL
    SELECT n.id, n.token, n.reason, n.exc_type, n.exc_args, false
    FROM unnest(%(nack_ids)s::bigint[], %(nack_tokens)s::uuid[], %(nack_reasons)s::text[],
                %(nack_exc_types)s::text[], %(nack_exc_args)s::jsonb[])
         AS n(id, token, reason, exc_type, exc_args)
), locked AS (
    -- "Running" is spelled lease_expires_at IS NOT NULL (the same rows, by the CHECK
    -- citeq_messages_lease_iff_running): with state = 'running' the planner may read the
    -- finished rows through the partial leases index, scanning every running row and every
    -- dead entry a drain left there since the last vacuum, on every exchange (PostgreSQL
    -- CPU per message went from 40 to 160-390 us in drains whose statistics made it pick
    -- that plan, issue 27). Now only the primary key can serve it: a few rows by id.
    -- A manual message of a group (schema/0065) that the application released while it ran
    -- is 'done' with its lease token kept: its ack or nack is late but no zombie's, and is
    -- reported as finished (released below), read in the same probe by id.
    SELECT m.id, m.lease_expires_at IS NULL AS released, m.lease_token FROM citeq_messages m
    WHERE m.id = ANY (ARRAY(SELECT id FROM done))
      AND (m.lease_expires_at IS NOT NULL OR (m.state = 'done' AND m.group_release = 'manual'))
    ORDER BY m.id
    FOR UPDATE
), finished AS (
    -- A manual message of a group is acked into 'parked' (it keeps its slot: nothing to
    -- promote, so its finish needs no group lock and comes here, broker/groups.py).
    UPDATE citeq_messages m
    SET state = CASE WHEN NOT d.acked THEN 'dead' WHEN m.group_release = 'manual' THEN 'parked'
                     ELSE 'done' END::citeq_message_state,
        finished_at = now(), lease_expires_at = NULL,
        dead_reason = d.reason, dead_exception = d.exc_type, dead_exception_args = d.exc_args,
        worker_id = CASE WHEN d.acked THEN m.worker_id END,
        lease_token = CASE WHEN d.acked THEN m.lease_token END
    FROM done d
    WHERE m.id = d.id AND m.lease_token = d.token AND m.lease_expires_at IS NOT NULL
      AND m.id = ANY (ARRAY(SELECT id FROM locked))
    RETURNING m.id, d.acked
), released AS (
    SELECT l.id, d.acked FROM locked l JOIN done d ON d.id = l.id AND d.token = l.lease_token WHERE l.released
), picked AS (
    -- Priority by priority, lowest value first (schema/0071: before PostgreSQL 18 a claim
    -- across priorities read every delayed message of the queue when none was due). The
    -- nested loop stops once %(limit)s rows are locked: the next priority is read only when
    -- this one's due messages ran out, and no row is locked that the claim does not take.
    SELECT q.id FROM citeq_queued_priorities(%(queue_name)s) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT id FROM citeq_messages
        WHERE state = 'queued' AND queue_name = %(queue_name)s AND priority = p.priority AND eta <= now()
          -- Claim only after the finished rows are written (see the lock order above).
          AND (SELECT count(*) FROM finished) >= 0
          -- A paused queue gives nothing out; acks and nacks above still finish.
          AND NOT EXISTS (SELECT 1 FROM citeq_queue_pauses WHERE queue_name = %(queue_name)s)
        ORDER BY eta, id
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ) AS q
    LIMIT %(limit)s
), claimed AS (
    UPDATE citeq_messages m
    SET state = 'running', worker_id = %(worker_id)s, lease_token = gen_random_uuid(),
        lease_expires_at = now() + %(lease_seconds)s * interval '1 second',
        attempts = m.attempts + 1, started_at = now()
    -- By id from an array: its estimate is "a few rows" whatever the LIMIT, so the cached
    -- generic plan updates them through the primary key (joined with picked, a generic
    -- plan expects a tenth of the queue and hashes the whole table).
    WHERE m.id = ANY (ARRAY(SELECT id FROM picked))
    RETURNING m.id, m.lease_token, m.payload, m.priority, m.eta
)
SELECT CASE WHEN acked THEN 'acked' ELSE 'nacked' END AS kind, id, NULL::text, NULL::bytea, NULL::int,
       NULL::timestamptz
FROM finished
UNION ALL SELECT CASE WHEN acked THEN 'acked' ELSE 'nacked' END, id, NULL, NULL, NULL, NULL FROM released
UNION ALL SELECT 'claimed', id, lease_token::text, payload, priority, eta FROM claimed
-- The claim's own order: the worker hands them to its threads in this order.
ORDER BY 5, 6, 2;

-- grouped_messages_finish_many --
-- Acks and nacks of grouped messages, and the promotion of their keys' next messages, in
-- one statement sent right after the advisory locks of the keys (broker/locks.py), so the
-- finish and the promotion commit together under the lock. %(queues)s/%(keys)s name more
-- keys to promote (a sweep, a reaped dead letter, a retried one) without finishing anything.
--
-- All parts read one snapshot, taken after the locks were granted: a key's in-flight count
-- is what it had, less the messages finished here. Under the key's lock no one else can
-- raise that count (sends and promotions of the key take the lock); others can only lower
-- it (a reaper's dead letter), which makes this promote fewer, never more — the sweep
-- catches up. Finished rows are locked before they are counted (a reaper that re-queues one
-- meanwhile wins, and it is neither finished nor subtracted). Acks and nacks are fenced by
-- lease token as in messages_exchange_many: a zombie's late ack finishes and promotes nothing.
-- @prepared
SET LOCAL synchronous_commit = off;
WITH done AS (
    SELECT a.id, a.token, NULL::text AS reason, NULL::text AS exc_type, NULL::jsonb AS exc_args, true AS acked
    FROM unnest(%(ack_ids)s::bigint[], %(ack_tokens)s::uuid[]) AS a(id, token)
    UNION ALL
    SELECT n.id, n.token, n.reason, n.exc_type, n.exc_args, false
    FROM unnest(%(nack_ids)s::bigint[], %(nack_tokens)s::uuid[], %(nack_reasons)s::text[],
                %(nack_exc_types)s::text[], %(nack_exc_args)s::jsonb[])
         AS n(id, token, reason, exc_type, exc_args)
), locked AS (
    -- The finished rows by id through the primary key only, as in messages_exchange_many:
    -- "running" is spelled lease_expires_at IS NOT NULL and a released one is read in the
    -- same probe. Spelled with state = 'running' / state = 'done', the generic plan read
    -- them through the partial leases and finished indexes, scanning every running row and
    -- every finished one (a drain's whole history) on each grouped step: at 5,000 finished
    -- rows 2 ms of a 5.5 ms statement (EXPLAIN ANALYZE, issue 25's 100-key drain).
    SELECT m.id, m.lease_expires_at IS NULL AS released, m.lease_token FROM citeq_messages m
    WHERE m.id = ANY (ARRAY(SELECT id FROM done))
      AND (m.lease_expires_at IS NOT NULL OR (m.state = 'done' AND m.group_release = 'manual'))
    ORDER BY m.id
    FOR UPDATE
), finished AS (
    -- A message whose release is manual is acked into 'parked' and dies into a dead letter
    -- that keeps its slot: neither frees its key (MessageStore.release_many does).
    UPDATE citeq_messages m
    SET state = CASE WHEN NOT d.acked THEN 'dead' WHEN m.group_release = 'manual' THEN 'parked'
                     ELSE 'done' END::citeq_message_state,
        finished_at = now(), lease_expires_at = NULL,
        dead_reason = d.reason, dead_exception = d.exc_type, dead_exception_args = d.exc_args,
        worker_id = CASE WHEN d.acked THEN m.worker_id END,
        lease_token = CASE WHEN d.acked THEN m.lease_token END
    FROM done d
    WHERE m.id = d.id AND m.lease_token = d.token AND m.lease_expires_at IS NOT NULL
      AND m.id = ANY (ARRAY(SELECT id FROM locked))
    RETURNING m.id, d.acked, m.queue_name, m.group_key, m.group_release
), released_before AS (
    -- Acks and nacks of messages the application released while they ran (release_many
    -- finished them, lease token kept): late, but not a zombie's.
    SELECT count(*) AS n FROM locked l JOIN done d ON d.id = l.id AND d.token = l.lease_token
    WHERE l.released
), keys AS (
    SELECT queue_name, group_key, count(*) AS freed FROM finished
    WHERE group_key IS NOT NULL AND group_release IS DISTINCT FROM 'manual'
    GROUP BY queue_name, group_key
    UNION ALL
    SELECT k.queue_name, k.group_key, 0 FROM unnest(%(queues)s::text[], %(keys)s::text[]) AS k(queue_name, group_key)
), free AS (
    SELECT k.queue_name, k.group_key, sum(k.freed)::bigint AS freed FROM keys k GROUP BY k.queue_name, k.group_key
), heads AS (
    SELECT h.id
    FROM free f
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM citeq_messages m
        WHERE (m.state IN ('queued', 'running', 'parked') OR (m.state = 'dead' AND m.group_release = 'manual'))
          AND m.group_key IS NOT NULL AND m.queue_name = f.queue_name AND m.group_key = f.group_key) AS busy
    CROSS JOIN LATERAL (
        SELECT h.id FROM citeq_messages h
        WHERE h.state = 'held' AND h.queue_name = f.queue_name AND h.group_key = f.group_key
        ORDER BY h.group_seq, h.id
        LIMIT greatest(coalesce((SELECT h1.group_limit FROM citeq_messages h1
                                 WHERE h1.state = 'held' AND h1.queue_name = f.queue_name
                                   AND h1.group_key = f.group_key
                                 ORDER BY h1.group_seq, h1.id LIMIT 1), 0)
                       - (busy.n - f.freed), 0)
    ) AS h
), promoted AS (
    UPDATE citeq_messages m SET state = 'queued'
    -- state::text: by the primary key alone (a plain "state = 'held'" let the plan AND in a
    -- scan of the whole held index, every waiting message of every key, per step)
    WHERE m.id = ANY (ARRAY(SELECT id FROM heads)) AND m.state::text = 'held'
    RETURNING m.id, m.queue_name, m.eta
), woken AS (
    -- The promoted messages wake their queues as messages_insert_many's do: a queue with a
    -- due one is notified unless a due message of it was already waiting (this statement's
    -- snapshot: before the promotion); a delayed one notifies its eta. Not the row trigger
    -- of schema/0045 (schema/0067 leaves promotions out of it): its "no earlier due message"
    -- probe read the queue's whole claim index whenever the promoted message was older than
    -- the ones waiting, as a key's next message usually is.
    SELECT CASE WHEN q.due AND NOT citeq_queue_due_waiting(q.queue_name)
                THEN pg_notify('citeq_wakeup', q.queue_name) END AS now_due,
           CASE WHEN q.next_eta IS NOT NULL
                THEN pg_notify('citeq_wakeup',
                               q.queue_name || ' ' || greatest(extract(epoch FROM q.next_eta - clock_timestamp()), 0)::text)
                END AS later
    FROM (SELECT queue_name, bool_or(eta <= now()) AS due, min(eta) FILTER (WHERE eta > now()) AS next_eta
          FROM promoted GROUP BY queue_name) AS q
), rejected AS (
    -- a NOTICE when the fence refused some (read by MessageStore.exchange, see schema/0022)
    SELECT citeq_grouped_acks_rejected((SELECT count(*) FROM done) - (SELECT count(*) FROM finished)
                                       - (SELECT n FROM released_before)) AS n
)
SELECT CASE WHEN acked THEN 'acked' ELSE 'nacked' END AS kind, id FROM finished
WHERE (SELECT n FROM rejected) IS NOT NULL
UNION ALL SELECT 'promoted', id FROM promoted WHERE (SELECT count(*) FROM woken) >= 0;

-- grouped_messages_exchange_many --
-- messages_exchange_many for a consumer step that finishes grouped messages, sent right after
-- the advisory locks of their keys (broker/locks.py): the acks and nacks of both kinds are
-- written, the keys' next messages promoted as grouped_messages_finish_many promotes them
-- (the same snapshot arithmetic under the same locks), and the claim picks among the
-- queue's due queued messages *and* the heads promoted here, in the claim's one order
-- (priority, eta, id), up to %(limit)s, of which at most %(head_limit)s heads (the worker's
-- share of the queue's keys). A head the claim picks goes from 'held' straight to 'running'
-- under this worker's lease; a head it does not pick (no room, beyond the share, not due, the
-- queue paused) becomes 'queued' as before, and wakes the other consumers as
-- grouped_messages_finish_many's promotions do (woken, below), unless a due message this step
-- leaves waiting was already queued.
--
-- Why one statement and not the finish followed by messages_exchange_many: in a drain of
-- 100 keys nearly every claimed message is a head promoted in the same step, and each cost
-- a second row version (held -> queued -> running, with their index entries), the
-- per-row trigger of 'queued' rows (its NOT EXISTS and, as no earlier message was queued,
-- a NOTIFY that serialized the commit and woke every consumer of the queue), and a
-- second statement. Messages claimed are the same ones the two statements would have
-- claimed: a promoted head is picked only when it ranks within the first %(limit)s of the
-- queued messages and the heads together.
--
-- Lock order as in messages_exchange_many and the two statements before it: the finished
-- rows first (in id order), then the promoted heads (in id order), then the queued rows
-- with SKIP LOCKED. ack_ids/nack_*: messages without a group (or of manual release, which
-- free nothing); group_ack_ids/group_nack_*: those whose finish frees a slot of their
-- key, whose keys were locked. Returns what messages_exchange_many returns, the grouped
-- finished rows among the acked and nacked.
-- enable_sort = off: the queued messages are read through the claim index in its order,
-- as in messages_exchange_many (why there).
-- @prepared
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL synchronous_commit = off;
SET LOCAL enable_sort = off;
SET LOCAL jit = off;
WITH done AS (
    SELECT a.id, a.token, NULL::text AS reason, NULL::text AS exc_type, NULL::jsonb AS exc_args, true AS acked,
           false AS frees
    FROM unnest(%(ack_ids)s::bigint[], %(ack_tokens)s::uuid[]) AS a(id, token)
    UNION ALL
    SELECT n.id, n.token, n.reason, n.exc_type, n.exc_args, false, false
    FROM unnest(%(nack_ids)s::bigint[], %(nack_tokens)s::uuid[], %(nack_reasons)s::text[],
                %(nack_exc_types)s::text[], %(nack_exc_args)s::jsonb[])
         AS n(id, token, reason, exc_type, exc_args)
    UNION ALL
    SELECT a.id, a.token, NULL, NULL, NULL, true, true
    FROM unnest(%(group_ack_ids)s::bigint[], %(group_ack_tokens)s::uuid[]) AS a(id, token)
    UNION ALL
    SELECT n.id, n.token, n.reason, n.exc_type, n.exc_args, false, true
    FROM unnest(%(group_nack_ids)s::bigint[], %(group_nack_tokens)s::uuid[], %(group_nack_reasons)s::text[],
                %(group_nack_exc_types)s::text[], %(group_nack_exc_args)s::jsonb[])
         AS n(id, token, reason, exc_type, exc_args)
), locked AS (
    -- By id through the primary key only (see messages_exchange_many).
    SELECT m.id, m.lease_expires_at IS NULL AS released, m.lease_token FROM citeq_messages m
    WHERE m.id = ANY (ARRAY(SELECT id FROM done))
      AND (m.lease_expires_at IS NOT NULL OR (m.state = 'done' AND m.group_release = 'manual'))
    ORDER BY m.id
    FOR UPDATE
), finished AS (
    UPDATE citeq_messages m
    SET state = CASE WHEN NOT d.acked THEN 'dead' WHEN m.group_release = 'manual' THEN 'parked'
                     ELSE 'done' END::citeq_message_state,
        finished_at = now(), lease_expires_at = NULL,
        dead_reason = d.reason, dead_exception = d.exc_type, dead_exception_args = d.exc_args,
        worker_id = CASE WHEN d.acked THEN m.worker_id END,
        lease_token = CASE WHEN d.acked THEN m.lease_token END
    FROM done d
    WHERE m.id = d.id AND m.lease_token = d.token AND m.lease_expires_at IS NOT NULL
      AND m.id = ANY (ARRAY(SELECT id FROM locked))
    RETURNING m.id, d.acked, d.frees, m.queue_name, m.group_key, m.group_release
), released AS (
    SELECT l.id, d.acked FROM locked l JOIN done d ON d.id = l.id AND d.token = l.lease_token WHERE l.released
), free AS (
    SELECT queue_name, group_key, count(*) AS freed FROM finished
    WHERE frees AND group_key IS NOT NULL AND group_release IS DISTINCT FROM 'manual'
    GROUP BY queue_name, group_key
), heads AS (
    -- As in grouped_messages_finish_many: per key, as many of its held messages (in its
    -- order) as its limit leaves room for, counted in this snapshot less what is finished here.
    SELECT h.id
    FROM free f
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM citeq_messages m
        WHERE (m.state IN ('queued', 'running', 'parked') OR (m.state = 'dead' AND m.group_release = 'manual'))
          AND m.group_key IS NOT NULL AND m.queue_name = f.queue_name AND m.group_key = f.group_key) AS busy
    CROSS JOIN LATERAL (
        SELECT h.id FROM citeq_messages h
        WHERE h.state = 'held' AND h.queue_name = f.queue_name AND h.group_key = f.group_key
        ORDER BY h.group_seq, h.id
        LIMIT greatest(coalesce((SELECT h1.group_limit FROM citeq_messages h1
                                 WHERE h1.state = 'held' AND h1.queue_name = f.queue_name
                                   AND h1.group_key = f.group_key
                                 ORDER BY h1.group_seq, h1.id LIMIT 1), 0)
                       - (busy.n - f.freed), 0)
    ) AS h
), promotable AS (
    -- The heads locked, in id order, after the finished rows (a flush may have taken one).
    SELECT m.id, m.queue_name, m.priority, m.eta FROM citeq_messages m
    -- state::text: by the primary key alone (a plain "state = 'held'" let the plan AND in a
    -- scan of the whole held index, every waiting message of every key, per step)
    WHERE m.id = ANY (ARRAY(SELECT id FROM heads)) AND m.state::text = 'held'
    ORDER BY m.id
    FOR UPDATE
), queued AS (
    -- Priority by priority, as in messages_exchange_many.
    SELECT q.id, q.priority, q.eta FROM citeq_queued_priorities(%(queue_name)s) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT id, priority, eta FROM citeq_messages
        WHERE state = 'queued' AND queue_name = %(queue_name)s AND priority = p.priority AND eta <= now()
          -- Claim only after the finished rows and the heads are locked (see the lock order).
          AND (SELECT count(*) FROM promotable) >= 0
          AND NOT EXISTS (SELECT 1 FROM citeq_queue_pauses WHERE queue_name = %(queue_name)s)
        ORDER BY eta, id
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ) AS q
    LIMIT %(limit)s
), picked AS (
    SELECT c.id FROM (
        SELECT id, priority, eta FROM queued
        UNION ALL
        -- At most %(head_limit)s of the heads: the worker's share of the queue's keys
        -- (broker/consumer.py); the others wait 'queued' for the other workers.
        (SELECT id, priority, eta FROM promotable
         WHERE queue_name = %(queue_name)s AND eta <= now()
           AND NOT EXISTS (SELECT 1 FROM citeq_queue_pauses WHERE queue_name = %(queue_name)s)
         ORDER BY priority, eta, id
         LIMIT %(head_limit)s)
    ) AS c
    ORDER BY c.priority, c.eta, c.id
    LIMIT %(limit)s
), claimed AS (
    UPDATE citeq_messages m
    SET state = 'running', worker_id = %(worker_id)s, lease_token = gen_random_uuid(),
        lease_expires_at = now() + %(lease_seconds)s * interval '1 second',
        attempts = m.attempts + 1, started_at = now()
    -- state::text: by the primary key alone (with "state IN (...)" a generic plan made on
    -- statistics that saw no live row read every live row through the message_id index)
    WHERE m.id = ANY (ARRAY(SELECT id FROM picked)) AND m.state::text IN ('queued', 'held')
    RETURNING m.id, m.lease_token, m.payload, m.priority, m.eta
), promoted AS (
    -- The heads the claim did not pick wait 'queued' for any consumer.
    UPDATE citeq_messages m SET state = 'queued'
    WHERE m.id = ANY (ARRAY(SELECT id FROM promotable WHERE id <> ALL (ARRAY(SELECT id FROM picked))))
      AND m.state::text = 'held'  -- by the primary key alone (see promotable)
    RETURNING m.id, m.queue_name, m.eta
), woken AS (
    -- As in grouped_messages_finish_many, except that a message this step claims does not
    -- count as waiting: the heads left queued are news to the other consumers when nothing
    -- else due is left for them.
    SELECT CASE WHEN q.due AND NOT citeq_queue_due_waiting(q.queue_name, ARRAY(SELECT id FROM picked))
                THEN pg_notify('citeq_wakeup', q.queue_name) END AS now_due,
           CASE WHEN q.next_eta IS NOT NULL
                THEN pg_notify('citeq_wakeup',
                               q.queue_name || ' ' || greatest(extract(epoch FROM q.next_eta - clock_timestamp()), 0)::text)
                END AS later
    FROM (SELECT queue_name, bool_or(eta <= now()) AS due, min(eta) FILTER (WHERE eta > now()) AS next_eta
          FROM promoted GROUP BY queue_name) AS q
)
SELECT CASE WHEN acked THEN 'acked' ELSE 'nacked' END AS kind, id, NULL::text, NULL::bytea, NULL::int,
       NULL::timestamptz
FROM finished
UNION ALL SELECT CASE WHEN acked THEN 'acked' ELSE 'nacked' END, id, NULL, NULL, NULL, NULL FROM released
UNION ALL SELECT 'claimed', id, lease_token::text, payload, priority, eta FROM claimed
WHERE (SELECT count(*) FROM woken) >= 0
ORDER BY 5, 6, 2;

-- grouped_messages_release_many --
-- The application's release of messages whose group_release is 'manual' (MessageStore.
-- release_many), sent right after the advisory locks of their keys, %(queues)s/%(keys)s,
-- the only keys it touches: a parked or running one is finished ('done'; a running one's
-- handler acks it later, harmlessly), one not yet delivered (held, queued) is withdrawn
-- (deleted), a dead letter stays one but gives its slot up ('released'). Then each key's
-- next held messages are promoted into the room this made, as grouped_messages_finish_many
-- does (one snapshot, taken after the locks: the slots counted include the released rows,
-- which are subtracted). Anything else (done, unknown ids, released already) is left alone,
-- so releasing twice changes nothing. Returns the promoted messages.
-- @prepared
-- The rows are found by message id first (the live rows' index), then locked by id: asked
-- for them in id order, a generic plan planned for "a few rows" read the whole primary key
-- and filtered it (every message of the table, done ones included, per release).
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL enable_seqscan = off;
SET LOCAL jit = off;
WITH named AS MATERIALIZED (
    SELECT m.id FROM citeq_messages m
    WHERE m.message_id = ANY (%(message_ids)s::text[]) AND m.state <> 'done'
), target AS (
    SELECT m.id, m.state, m.queue_name, m.group_key FROM citeq_messages m
    -- state::text: by the primary key alone (a plain "state <> 'done'" matched the live rows'
    -- index, and a plan made on a near-empty table read all of it, filtering by id)
    WHERE m.id = ANY (ARRAY(SELECT id FROM named)) AND m.state::text <> 'done' AND m.group_release = 'manual'
      AND (m.queue_name, m.group_key) IN (SELECT * FROM unnest(%(queues)s::text[], %(keys)s::text[]))
    ORDER BY m.id
    FOR UPDATE
-- The rows by id from arrays (the primary key, whatever the statistics of the CTE say).
), withdrawn AS (
    DELETE FROM citeq_messages m
    WHERE m.id = ANY (ARRAY(SELECT id FROM target WHERE state IN ('held', 'queued')))
    RETURNING m.id
), finished AS (
    -- Finished by the application, not by a worker: no worker_id; the lease token stays, by
    -- which a running one's late ack is known (messages_exchange_many).
    UPDATE citeq_messages m SET state = 'done', finished_at = now(), lease_expires_at = NULL, worker_id = NULL
    WHERE m.id = ANY (ARRAY(SELECT id FROM target WHERE state IN ('running', 'parked')))
    RETURNING m.id
), gave_up AS (
    UPDATE citeq_messages m SET group_release = 'released'
    WHERE m.id = ANY (ARRAY(SELECT id FROM target WHERE state = 'dead'))
    RETURNING m.id
), free AS (
    SELECT k.queue_name, k.group_key,
           count(t.id) FILTER (WHERE t.state IN ('queued', 'running', 'parked', 'dead')) AS freed
    FROM unnest(%(queues)s::text[], %(keys)s::text[]) AS k(queue_name, group_key)
    LEFT JOIN target t USING (queue_name, group_key)
    GROUP BY k.queue_name, k.group_key
), heads AS (
    SELECT h.id
    FROM free f
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM citeq_messages m
        WHERE (m.state IN ('queued', 'running', 'parked') OR (m.state = 'dead' AND m.group_release = 'manual'))
          AND m.group_key IS NOT NULL AND m.queue_name = f.queue_name AND m.group_key = f.group_key) AS busy
    CROSS JOIN LATERAL (
        SELECT h.id FROM citeq_messages h
        WHERE h.state = 'held' AND h.queue_name = f.queue_name AND h.group_key = f.group_key
          AND h.id <> ALL (ARRAY(SELECT id FROM target))
        ORDER BY h.group_seq, h.id
        LIMIT greatest(coalesce((SELECT h1.group_limit FROM citeq_messages h1
                                 WHERE h1.state = 'held' AND h1.queue_name = f.queue_name
                                   AND h1.group_key = f.group_key AND h1.id <> ALL (ARRAY(SELECT id FROM target))
                                 ORDER BY h1.group_seq, h1.id LIMIT 1), 0)
                       - (busy.n - f.freed), 0)
    ) AS h
), promoted AS (
    UPDATE citeq_messages m SET state = 'queued'
    -- state::text: by the primary key alone (a plain "state = 'held'" let the plan AND in a
    -- scan of the whole held index, every waiting message of every key, per step)
    WHERE m.id = ANY (ARRAY(SELECT id FROM heads)) AND m.state::text = 'held'
      -- after the released rows are written (the unique index of concurrency 1 checks each row)
      AND (SELECT count(*) FROM finished) + (SELECT count(*) FROM withdrawn) + (SELECT count(*) FROM gave_up) >= 0
    RETURNING m.message_id, m.queue_name, m.group_key, m.eta
), woken AS (
    -- The promoted messages wake their queues as messages_insert_many's do: a queue with a
    -- due one is notified unless a due message of it was already waiting (this statement's
    -- snapshot: before the promotion); a delayed one notifies its eta. Not the row trigger
    -- of schema/0045 (schema/0067 leaves promotions out of it): its "no earlier due message"
    -- probe read the queue's whole claim index whenever the promoted message was older than
    -- the ones waiting, as a key's next message usually is.
    SELECT CASE WHEN q.due AND NOT citeq_queue_due_waiting(q.queue_name)
                THEN pg_notify('citeq_wakeup', q.queue_name) END AS now_due,
           CASE WHEN q.next_eta IS NOT NULL
                THEN pg_notify('citeq_wakeup',
                               q.queue_name || ' ' || greatest(extract(epoch FROM q.next_eta - clock_timestamp()), 0)::text)
                END AS later
    FROM (SELECT queue_name, bool_or(eta <= now()) AS due, min(eta) FILTER (WHERE eta > now()) AS next_eta
          FROM promoted GROUP BY queue_name) AS q
)
SELECT message_id, queue_name, group_key FROM promoted WHERE (SELECT count(*) FROM woken) >= 0;

-- grouped_messages_redeliver_many --
-- Deliver again messages whose release is manual and that hold their slot without running:
-- parked, or dead (out of deliveries). They keep their slot and their place (nothing is
-- promoted or freed); they run with fresh deliveries. The application's backstop for work
-- whose handler ended without starting it (the analysis queue's resume sweep). Returns them.
UPDATE citeq_messages m
SET state = 'queued', attempts = 0, eta = now(), finished_at = NULL, started_at = NULL,
    worker_id = NULL, lease_token = NULL, lease_expires_at = NULL,
    dead_reason = NULL, dead_exception = NULL, dead_exception_args = NULL
WHERE m.message_id = ANY (%(message_ids)s::text[]) AND m.group_release = 'manual'
  AND m.state IN ('parked', 'dead')
RETURNING m.message_id;

-- group_keys_of_messages_many --
-- The keys of some messages (those a reaper just dead-lettered), to promote their next.
SELECT DISTINCT queue_name, group_key FROM citeq_messages
WHERE id = ANY (%(ids)s::bigint[]) AND group_key IS NOT NULL
ORDER BY 1, 2;

-- groups_stalled_many --
-- Keys whose head is held while the key has room in flight: a promotion was lost (a crash
-- between a finish and its promotion cannot happen, they are one statement; but a dead
-- letter of the reaper, of an undecodable payload or a purge frees a key without one).
-- The sweep promotes them; the statement re-checks under the lock.
SELECT h.queue_name, h.group_key
FROM (SELECT DISTINCT ON (queue_name, group_key) queue_name, group_key, group_limit
      FROM citeq_messages WHERE state = 'held'
      ORDER BY queue_name, group_key, group_seq, id) AS h
WHERE (SELECT count(*) FROM citeq_messages m
       WHERE (m.state IN ('queued', 'running', 'parked') OR (m.state = 'dead' AND m.group_release = 'manual'))
         AND m.group_key IS NOT NULL
         AND m.queue_name = h.queue_name AND m.group_key = h.group_key) < h.group_limit
ORDER BY 1, 2
LIMIT %(limit)s;

-- group_stats_many --
-- Per queue: keys with waiting (held) messages, messages held, grouped messages in flight,
-- keys in flight, and the age of the oldest held head (seconds since it was sent).
WITH held AS (
    SELECT queue_name, count(DISTINCT group_key) AS waiting_keys, count(*) AS held,
           min(enqueued_at) AS oldest
    FROM citeq_messages WHERE state = 'held' GROUP BY queue_name
), flight AS (
    SELECT queue_name, count(*) AS in_flight, count(DISTINCT group_key) AS busy_keys
    FROM citeq_messages
    WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
      AND group_key IS NOT NULL
    GROUP BY queue_name
)
SELECT queue_name,
       coalesce(h.waiting_keys, 0)::int AS waiting_keys,
       coalesce(h.held, 0)::int AS held,
       coalesce(f.in_flight, 0)::int AS in_flight,
       coalesce(f.busy_keys, 0)::int AS busy_keys,
       coalesce(extract(epoch FROM now() - h.oldest), 0)::float8 AS oldest_held_age_seconds
FROM held h FULL JOIN flight f USING (queue_name)
ORDER BY queue_name;

-- group_messages_many --
-- One key's messages not yet finished, in its order: in flight first, then held.
SELECT id, message_id, actor_name, state::text, group_seq, attempts, enqueued_at, eta, started_at
FROM citeq_messages
WHERE queue_name = %(queue_name)s AND group_key = %(group_key)s
  AND (state IN ('held', 'queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
ORDER BY state <> 'held' DESC, group_seq, id
LIMIT %(limit)s;

-- group_keys_many --
-- Keys with unfinished messages (of one queue, or of all): held and in flight, and how long
-- the oldest held one has waited; those waiting longest first, then keys only in flight.
SELECT queue_name, group_key,
       count(*) FILTER (WHERE state = 'held')::int AS held,
       count(*) FILTER (WHERE state <> 'held')::int AS in_flight,
       extract(epoch FROM now() - min(enqueued_at) FILTER (WHERE state = 'held'))::float8
           AS oldest_held_age_seconds
FROM citeq_messages
WHERE (state IN ('held', 'queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
  AND group_key IS NOT NULL AND (%(queue_name)s::text IS NULL OR queue_name = %(queue_name)s)
GROUP BY queue_name, group_key
ORDER BY min(enqueued_at) FILTER (WHERE state = 'held') NULLS LAST, queue_name, group_key
LIMIT %(limit)s;

-- queue_next_eta_one --
-- Seconds until the earliest delayed message of a queue is due (NULL: none); an idle
-- consumer sleeps until then rather than a whole poll interval. The earliest of each
-- priority's, one descent each (schema/0071: across priorities, PostgreSQL before 18 read
-- every delayed message of the queue).
SELECT extract(epoch FROM min(n.eta) - now())::float8
FROM citeq_queued_priorities(%(queue_name)s) AS p(priority)
CROSS JOIN LATERAL (
    SELECT eta FROM citeq_messages
    WHERE state = 'queued' AND queue_name = %(queue_name)s AND priority = p.priority AND eta > now()
    ORDER BY eta
    LIMIT 1
) AS n;

-- queue_group_share_one --
-- What a consumer's share of a queue's grouped messages in flight is made of: the threads of
-- the live workers that serve the queue (a worker without a count: one), and how many of
-- those messages are queued or running, counted up to %(per_thread)s per thread (beyond,
-- the share is more than the consumer would hold anyway).
WITH serving AS (
    SELECT coalesce(sum(coalesce(threads, 1)), 0)::int AS threads FROM citeq_workers
    WHERE %(queue_name)s = ANY (queues) AND last_seen_at >= now() - %(lease_seconds)s * interval '1 second'
)
SELECT (SELECT count(*) FROM (SELECT 1 FROM citeq_messages
                              WHERE state IN ('queued', 'running') AND group_key IS NOT NULL
                                AND queue_name = %(queue_name)s
                              LIMIT (SELECT threads FROM serving) * %(per_thread)s) AS f)::int,
       threads
FROM serving;

-- messages_requeue_many --
-- Give prefetched, never-started messages back; the delivery does not count.
UPDATE citeq_messages m
SET state = 'queued', worker_id = NULL, lease_token = NULL, lease_expires_at = NULL,
    attempts = greatest(m.attempts - 1, 0), started_at = NULL
FROM unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS a(id, token)
WHERE m.id = a.id AND m.lease_token = a.token AND m.state = 'running'
RETURNING m.id;

-- undecodable_message_dead_letter --
-- A payload this worker cannot decode is dead-lettered with the reason.
UPDATE citeq_messages
SET state = 'dead', finished_at = now(), dead_reason = %(reason)s,
    worker_id = NULL, lease_token = NULL, lease_expires_at = NULL
WHERE id = %(id)s AND lease_token = %(token)s AND state = 'running';

-- leases_extend --
-- LeaseKeeper.renew: every message this process holds gets a fresh lease. Held means known to
-- hold: the rows its consumers claimed and have not finished, by lease token. A row that
-- carries this worker's id but whose claim never reached it (the answer lost with its
-- connection) is not extended: its lease runs out and the reaper re-queues it. Rows
-- another statement has locked are skipped, never waited for: the consumer's ack is
-- finishing them (no lease needed any more), or a reaper or another worker took them over
-- (the lease is lost anyway). So a lease renewal never takes part in a deadlock.
UPDATE citeq_messages
SET lease_expires_at = now() + %(lease_seconds)s * interval '1 second'
WHERE id = ANY (ARRAY(
    SELECT id FROM citeq_messages
    WHERE id = ANY (%(ids)s::bigint[]) AND state = 'running'
      AND (id, lease_token) IN (SELECT * FROM unnest(%(ids)s::bigint[], %(tokens)s::uuid[]))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
));

-- leases_reap_expired_many --
-- Messages whose worker stopped heartbeating go back to their queue, or to the dead
-- letters once they used up their deliveries. Batched; SKIP LOCKED makes two reapers safe.
WITH expired AS (
    SELECT id FROM citeq_messages
    WHERE state = 'running' AND lease_expires_at < coalesce(%(now)s, now())
    ORDER BY lease_expires_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE citeq_messages m
SET state = CASE WHEN m.attempts >= %(max_deliveries)s THEN 'dead' ELSE 'queued' END::citeq_message_state,
    dead_reason = CASE WHEN m.attempts >= %(max_deliveries)s
                       THEN format('lease expired on %%s delivery(ies); worker %%s presumed dead',
                                   m.attempts, m.worker_id) END,
    finished_at = CASE WHEN m.attempts >= %(max_deliveries)s THEN now() END,
    eta = now(), worker_id = NULL, lease_token = NULL, lease_expires_at = NULL
FROM expired
WHERE m.id = expired.id
RETURNING m.id, m.state::text, m.queue_name;

-- messages_prune_finished --
-- Delete acknowledged messages older than the retention, a batch at a time.
-- Two processes pruning at once skip each other's rows (without SKIP LOCKED they could
-- lock the same rows in different orders and deadlock).
-- The pruned rows are counted into citeq_queue_history first (the operator's "processed in
-- the last hour" must not depend on the retention), and history older than a day goes.
-- The main statement is the DELETE, so the cursor's rowcount is the number pruned.
WITH doomed AS (
    SELECT id, queue_name, finished_at FROM citeq_messages
    WHERE state = 'done' AND finished_at < now() - %(retention_seconds)s * interval '1 second'
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), folded AS (
    INSERT INTO citeq_queue_history AS h (queue_name, minute, processed)
    SELECT queue_name, date_trunc('minute', finished_at), count(*) FROM doomed GROUP BY 1, 2
    ON CONFLICT (queue_name, minute) DO UPDATE SET processed = h.processed + excluded.processed
), forgotten AS (
    DELETE FROM citeq_queue_history WHERE minute < now() - interval '1 day'
)
DELETE FROM citeq_messages WHERE id IN (SELECT id FROM doomed);

-- results_prune_expired --
-- Delete results whose TTL ran out.
DELETE FROM citeq_results
WHERE message_key IN (SELECT message_key FROM citeq_results WHERE expires_at < now() LIMIT %(limit)s
                      FOR UPDATE SKIP LOCKED);

-- worker_upsert --
-- The row of one worker process (LeaseKeeper.renew): alive, which queues it serves, its
-- connections and its worker threads.
INSERT INTO citeq_workers (worker_id, hostname, pid, queues, connections, threads)
VALUES (%(worker_id)s, %(hostname)s, %(pid)s, %(queues)s, %(connections)s, %(threads)s)
ON CONFLICT (worker_id) DO UPDATE
SET queues = excluded.queues, connections = excluded.connections, threads = excluded.threads,
    last_seen_at = now();

-- worker_delete --
-- A worker that shuts down cleanly leaves.
DELETE FROM citeq_workers WHERE worker_id = %(worker_id)s;

-- workers_prune --
-- Forget processes that stopped heartbeating (rows locked by a heartbeat are alive).
DELETE FROM citeq_workers
WHERE worker_id IN (SELECT worker_id FROM citeq_workers
                    WHERE last_seen_at < now() - %(stale_seconds)s * interval '1 second'
                    FOR UPDATE SKIP LOCKED);

-- workers_live_many --
-- Live worker processes (a heartbeat within the lease), newest heartbeat first.
SELECT worker_id, hostname, pid, queues, connections, threads, started_at, last_seen_at,
       extract(epoch FROM now() - last_seen_at)::float8 AS seconds_since_seen
FROM citeq_workers
WHERE last_seen_at >= now() - %(lease_seconds)s * interval '1 second'
ORDER BY last_seen_at DESC;

-- result_upsert --
-- Store (or replace) a result until its TTL.
INSERT INTO citeq_results (message_key, result, expires_at)
VALUES (%(message_key)s, %(result)s, now() + %(ttl_ms)s * interval '1 millisecond')
ON CONFLICT (message_key) DO UPDATE SET result = excluded.result, expires_at = excluded.expires_at;

-- result_get_one --
-- A result that has not expired.
SELECT result FROM citeq_results WHERE message_key = %(message_key)s AND expires_at >= now();

-- queue_stats_many --
-- Depth, delayed, running, dead and the age of the oldest due message, per queue, in one query.
-- Each part reads the partial index of its state, so finished messages (most of the table
-- until they are pruned) are never read: over all states at once, the server scanned the
-- whole table (16 ms with 200,000 finished messages, for a figure polled by metrics).
WITH queued AS (
    SELECT queue_name,
           count(*) FILTER (WHERE eta <= now()) AS ready,
           count(*) FILTER (WHERE eta > now()) AS delayed,
           min(eta) FILTER (WHERE eta <= now()) AS oldest_due
    FROM citeq_messages WHERE state = 'queued' GROUP BY queue_name
), running AS (
    SELECT queue_name, count(*) AS running FROM citeq_messages WHERE state = 'running' GROUP BY queue_name
), dead AS (
    SELECT queue_name, count(*) AS dead FROM citeq_messages WHERE state = 'dead' GROUP BY queue_name
)
SELECT queue_name,
       coalesce(q.ready, 0)::int AS ready,
       coalesce(q.delayed, 0)::int AS delayed,
       coalesce(r.running, 0)::int AS running,
       coalesce(d.dead, 0)::int AS dead,
       coalesce(extract(epoch FROM now() - q.oldest_due), 0)::float8 AS oldest_age_seconds
FROM queued q FULL JOIN running r USING (queue_name) FULL JOIN dead d USING (queue_name)
ORDER BY queue_name;

-- queue_history_many --
-- Per queue: processed (acknowledged) and failed (dead-lettered) in the last %(seconds)s, as
-- the finished rows still in the table (each from its state's partial index) plus what was
-- folded into citeq_queue_history when rows left it; the last failure; whether it is paused.
WITH live AS (
    SELECT queue_name, count(*) AS processed, 0::bigint AS failed, NULL::timestamptz AS last_failed
    FROM citeq_messages
    WHERE state = 'done' AND finished_at >= coalesce(%(now)s, now()) - %(seconds)s * interval '1 second'
    GROUP BY queue_name
    UNION ALL
    SELECT queue_name, 0, count(*) FILTER (WHERE finished_at >= coalesce(%(now)s, now()) - %(seconds)s * interval '1 second'),
           max(finished_at)
    FROM citeq_messages WHERE state = 'dead' GROUP BY queue_name
    UNION ALL
    SELECT queue_name, sum(processed), sum(failed), NULL
    FROM citeq_queue_history
    WHERE minute >= date_trunc('minute', coalesce(%(now)s, now()) - %(seconds)s * interval '1 second')
    GROUP BY queue_name
), paused AS (
    SELECT queue_name, paused_at FROM citeq_queue_pauses
)
SELECT queue_name, coalesce(sum(l.processed), 0)::int, coalesce(sum(l.failed), 0)::int, max(l.last_failed),
       p.paused_at
FROM live l FULL JOIN paused p USING (queue_name)
GROUP BY queue_name, p.paused_at
ORDER BY queue_name;

-- queue_pause --
-- Stop consumers claiming from a queue (idempotent: a paused queue stays paused since then).
INSERT INTO citeq_queue_pauses (queue_name, paused_by) VALUES (%(queue_name)s, %(paused_by)s)
ON CONFLICT (queue_name) DO NOTHING;

-- queue_resume_one --
-- Let consumers claim from a queue again, and wake them now rather than at their next poll.
WITH resumed AS (
    DELETE FROM citeq_queue_pauses WHERE queue_name = %(queue_name)s RETURNING queue_name
)
SELECT queue_name, pg_notify('citeq_wakeup', queue_name) FROM resumed;

-- messages_running_many --
-- Messages claimed by live workers, oldest claim first (the operator's "current messages").
SELECT worker_id, id, queue_name, actor_name, started_at,
       extract(epoch FROM now() - started_at)::float8 AS running_seconds
FROM citeq_messages
WHERE state = 'running'
ORDER BY started_at, id
LIMIT %(limit)s;

-- messages_count_unfinished_one --
-- Messages of a queue still to run (join waits for zero): queued and running counted
-- apart, each from its state's partial index (see queue_stats_many).
SELECT ((SELECT count(*) FROM citeq_messages WHERE queue_name = %(queue_name)s AND state = 'queued')
        + (SELECT count(*) FROM citeq_messages WHERE queue_name = %(queue_name)s AND state = 'running')
        + (SELECT count(*) FROM citeq_messages WHERE queue_name = %(queue_name)s AND state = 'held'))::int;

-- database_now_one --
-- The database's clock (join compares against it, never against the client's).
SELECT now();

-- dead_letter_since_one --
-- The first dead letter of a queue that died after a point in time (join's fail_fast).
SELECT id, actor_name, dead_reason, dead_exception, dead_exception_args FROM citeq_messages
WHERE queue_name = %(queue_name)s AND state = 'dead' AND finished_at >= %(since)s
ORDER BY finished_at, id LIMIT 1;

-- dead_letters_since_many --
-- A queue's dead letters that died after a point in time, in the order they died (the
-- broker's dead_letters, as StubBroker's).
SELECT id, actor_name, dead_reason, dead_exception, dead_exception_args, payload, finished_at
FROM citeq_messages
WHERE queue_name = %(queue_name)s AND state = 'dead' AND finished_at >= %(since)s
ORDER BY finished_at, id;

-- queue_flush --
-- Drop a queue's waiting messages (held ones of groups too).
DELETE FROM citeq_messages WHERE queue_name = %(queue_name)s AND state IN ('queued', 'held');

-- dead_letters_many --
-- Dead letters, newest first, optionally of one queue.
SELECT id, message_id, queue_name, actor_name, attempts, enqueued_at, finished_at, dead_reason, payload
FROM citeq_messages
WHERE state = 'dead' AND (%(queue_name)s::text IS NULL OR queue_name = %(queue_name)s)
ORDER BY id DESC
LIMIT %(limit)s;

-- dead_letters_lock_many --
-- Dead letters to retry (all of a queue, or given ids), locked until the retry commits.
SELECT id, payload FROM citeq_messages
WHERE state = 'dead'
  AND (%(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s::bigint[]))
  AND (%(queue_name)s::text IS NULL OR queue_name = %(queue_name)s)
ORDER BY id
FOR UPDATE;

-- dead_letters_retry_many --
-- Put dead letters back on their queue with fresh deliveries and their given payloads.
-- One of a group goes back held, in its old place: the promotion that follows (under the
-- key's lock, MessageStore.retry_dead_letters) lets it run when its key has room.
-- The failure is counted into citeq_queue_history first (it happened, whatever comes next).
WITH letters AS (
    SELECT id, queue_name, finished_at FROM citeq_messages
    WHERE id = ANY(%(ids)s::bigint[]) AND state = 'dead'
), folded AS (
    INSERT INTO citeq_queue_history AS h (queue_name, minute, failed)
    SELECT queue_name, date_trunc('minute', coalesce(finished_at, now())), count(*) FROM letters GROUP BY 1, 2
    ON CONFLICT (queue_name, minute) DO UPDATE SET failed = h.failed + excluded.failed
)
UPDATE citeq_messages m
SET state = CASE WHEN m.group_key IS NULL THEN 'queued' ELSE 'held' END::citeq_message_state,
    group_release = CASE WHEN m.group_release IS NOT NULL THEN 'manual' END, attempts = 0, eta = now(), dead_reason = NULL, finished_at = NULL,
    started_at = NULL, payload = r.payload, dead_exception = NULL, dead_exception_args = NULL
FROM unnest(%(ids)s::bigint[], %(payloads)s::bytea[]) AS r(id, payload)
WHERE m.id = r.id AND m.state = 'dead'
RETURNING m.id, m.queue_name, m.group_key;

-- dead_letters_purge_many --
-- Delete dead letters (all of a queue, or given ids).
-- The failures are counted into citeq_queue_history first (see dead_letters_retry_many).
WITH purged AS (
    DELETE FROM citeq_messages
    WHERE state = 'dead'
      AND (%(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s::bigint[]))
      AND (%(queue_name)s::text IS NULL OR queue_name = %(queue_name)s)
    RETURNING id, queue_name, finished_at
), folded AS (
    INSERT INTO citeq_queue_history AS h (queue_name, minute, failed)
    SELECT queue_name, date_trunc('minute', coalesce(finished_at, now())), count(*) FROM purged GROUP BY 1, 2
    ON CONFLICT (queue_name, minute) DO UPDATE SET failed = h.failed + excluded.failed
)
SELECT id FROM purged;

-- rate_limit_add_one --
-- Set a key iff it is absent (or expired). True when this call set it.
INSERT INTO rate_limit_counters AS r (key, value, expires_at)
VALUES (%(key)s, %(value)s, clock_timestamp() + %(ttl_ms)s * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
WHERE r.expires_at <= clock_timestamp()
RETURNING true;

-- rate_limit_incr_one --
-- Add to a key (absent or expired counts as 0) unless the result exceeds the maximum.
-- True when incremented. The row lock of the upsert makes concurrent calls take turns.
INSERT INTO rate_limit_counters AS r (key, value, expires_at)
SELECT %(key)s, %(amount)s, clock_timestamp() + %(ttl_ms)s * interval '1 millisecond'
WHERE %(amount)s <= %(maximum)s
ON CONFLICT (key) DO UPDATE
SET value = CASE WHEN r.expires_at <= clock_timestamp() THEN excluded.value ELSE r.value + %(amount)s END,
    expires_at = excluded.expires_at
WHERE (CASE WHEN r.expires_at <= clock_timestamp() THEN 0 ELSE r.value END) + %(amount)s <= %(maximum)s
RETURNING true;

-- rate_limit_decr_one --
-- Subtract from a key unless the result falls below the minimum. True when decremented.
UPDATE rate_limit_counters
SET value = value - %(amount)s, expires_at = clock_timestamp() + %(ttl_ms)s * interval '1 millisecond'
WHERE key = %(key)s AND expires_at > clock_timestamp() AND value - %(amount)s >= %(minimum)s
RETURNING true;

-- rate_limit_sum_many --
-- The live values of some keys, their rows locked (incr_and_sum's window, read in turn).
SELECT key, value FROM rate_limit_counters
WHERE key = ANY(%(keys)s::text[]) AND expires_at > clock_timestamp()
ORDER BY key
FOR UPDATE;

-- rate_limit_set --
-- Set a key to a value until its TTL, whatever it held (a barrier's "cleared" event), and
-- wake whoever waits on it (PostgresRateLimiterBackend.wait LISTENs on citeq_barrier; the
-- notification is delivered at commit, after the row is visible).
INSERT INTO rate_limit_counters AS r (key, value, expires_at)
VALUES (%(key)s, %(value)s, clock_timestamp() + %(ttl_ms)s * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at;
NOTIFY citeq_barrier, %(key)s;

-- rate_limit_get_one --
-- The live value of a key (none when absent or expired).
SELECT value FROM rate_limit_counters WHERE key = %(key)s AND expires_at > clock_timestamp();

-- rate_limit_prune --
-- Forget expired counters.
DELETE FROM rate_limit_counters WHERE expires_at <= clock_timestamp() - interval '1 minute';
