-- Promotions of held messages (a key's next message, schema/0021 and 0065) decide their
-- wake-ups in the statements that promote (grouped_messages_finish_many and
-- grouped_messages_release_many in broker/queries.sql), once per queue, as the inserts do.
--
-- The row trigger of schema/0045 asked, for each promoted row, whether a due message of the
-- queue with a smaller id was waiting. A key's next message was sent before most of what
-- waits in its queue (it waited behind its key), so the answer was usually "no", found only
-- after reading the queue's whole claim index, dead entries of the drain included: 0.3 ms
-- of server time per promoted message on a 2,000-job per-user queue (pg_stat_statements,
-- scripts/bench_queue.py), three quarters of a job's release. The trigger stays for the
-- other rows that become queued (requeue, reap, dead-letter retry, re-delivery).
DROP TRIGGER citeq_messages_notify_queued ON citeq_messages;
CREATE TRIGGER citeq_messages_notify_queued AFTER UPDATE ON citeq_messages
    FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state IS DISTINCT FROM 'queued' AND OLD.state <> 'held')
    EXECUTE FUNCTION citeq_notify_queued_row();
