-- Wake-ups from updates: only rows that become queued, decided per row (issue 27).
--
-- The statement-level AFTER UPDATE trigger of 0001 ran on every update of the table: on each
-- exchange (acks and claims, none of which queues a row) it captured a transition table of
-- the updated rows and ran its query over them. It cost 40-100 us of server CPU per
-- exchange statement, 5-12 us per message at batches of 8 (scripts/bench_profile.py). A
-- row trigger with a WHEN condition is checked in the executor for each updated row without
-- calling a function or keeping any rows, so acks and claims no longer pay for it; the rows
-- that do become queued (requeue, reap, dead-letter retry) run the same decision as before:
-- notify unless an earlier due message of the queue was already waiting. PostgreSQL folds
-- identical notifications of one transaction into one, so a batch still wakes a queue once.
CREATE FUNCTION citeq_notify_queued_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.eta <= now() THEN
        IF NOT EXISTS (
            SELECT 1 FROM citeq_messages
            WHERE state = 'queued' AND queue_name = NEW.queue_name AND eta <= now() AND id < NEW.id
        ) THEN
            PERFORM pg_notify('citeq_wakeup', NEW.queue_name);
        END IF;
    ELSE
        PERFORM pg_notify('citeq_wakeup',
                          NEW.queue_name || ' ' || greatest(extract(epoch FROM NEW.eta - clock_timestamp()), 0)::text);
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER citeq_messages_notify_update ON citeq_messages;
CREATE TRIGGER citeq_messages_notify_queued AFTER UPDATE ON citeq_messages
    FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state IS DISTINCT FROM 'queued')
    EXECUTE FUNCTION citeq_notify_queued_row();
