-- Fewer index entries per message (issue 27). A claim and an ack each write a new row version
-- that is never heap-only (state is in every partial index's predicate), so each gets an
-- entry in every index whose predicate it satisfies: 7 entries per message claimed and acked.
--
-- * citeq_messages_owner (worker_id of running rows) served no query: a claim wrote an entry
--   into it for nothing.
-- * The message_id lookups (the sweepers: is a job's message queued, running or dead?) never
--   ask about finished messages, most of the table: the index now leaves them out, so an ack
--   writes no entry there.
--
-- 5 entries per message; WAL per message claimed and acked 1,415-1,422 -> 1,228-1,231 bytes
-- (scripts/bench_profile.py's exchange, batches of 8).
DROP INDEX citeq_messages_owner;
CREATE INDEX citeq_messages_message_id_live ON citeq_messages (message_id) WHERE state <> 'done';
DROP INDEX citeq_messages_message_id;
