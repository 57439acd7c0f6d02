-- Priorities, dead letters that remember their exception, and worker connections.

-- A message's actor priority (Dramatiq: lower runs first), copied at send.
ALTER TABLE citeq_messages ADD COLUMN priority integer NOT NULL DEFAULT 0;
-- The exception a dead-lettered message died of: 'module:qualname' and its args (JSON),
-- so join(fail_fast=True) can raise it again in the joining process.
ALTER TABLE citeq_messages ADD COLUMN dead_exception text;
ALTER TABLE citeq_messages ADD COLUMN dead_exception_args jsonb;

-- The claim reads queued rows of one queue in (priority, eta, id) order, from this partial
-- index instead of the (queue_name, eta, id) one: the first rows of the scan are the due
-- messages of the lowest priority, so a claim still reads only the rows it takes (delayed
-- messages of a lower priority value are stepped over inside the index).
CREATE INDEX citeq_messages_claim_priority ON citeq_messages (queue_name, priority, eta, id)
    WHERE state = 'queued';
DROP INDEX citeq_messages_claim;

-- Connections the process holds (pool and listener), written with each heartbeat.
ALTER TABLE citeq_workers ADD COLUMN connections integer NOT NULL DEFAULT 0;

-- Wake-ups for delayed messages too: a statement that queues messages due later notifies
-- '<queue> <seconds until the earliest eta>', so an idle consumer sleeps until that eta
-- instead of finding the message with its next poll (a 100 ms retry backoff used to start
-- up to a poll interval late). Due messages notify as before (the queue's name alone, and
-- only when no earlier due message was waiting).
CREATE OR REPLACE FUNCTION citeq_notify_ready() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    q text;
    first_id bigint;
    next_eta timestamptz;
BEGIN
    FOR q, first_id, next_eta IN
        SELECT queue_name, min(id) FILTER (WHERE eta <= now()), min(eta) FILTER (WHERE eta > now())
        FROM changed WHERE state = 'queued' GROUP BY queue_name
    LOOP
        IF first_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM citeq_messages
            WHERE state = 'queued' AND queue_name = q AND eta <= now() AND id < first_id
        ) THEN
            PERFORM pg_notify('citeq_wakeup', q);
        END IF;
        IF next_eta IS NOT NULL THEN
            PERFORM pg_notify('citeq_wakeup',
                              q || ' ' || greatest(extract(epoch FROM next_eta - clock_timestamp()), 0)::text);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
