-- Message groups (issue 25): among messages of one queue with the same group_key, at most
-- group_limit are in flight ('queued' or 'running') at a time, in enqueue order (group_seq).
-- A grouped message is born 'queued' or 'held' under the key's transaction-level advisory
-- lock (broker/locks.py owns its format); a finish (ack or dead letter) of one promotes the
-- key's next held message under the same lock, in the same statement
-- (finish_grouped_messages in broker/queries.sql). Ungrouped messages (group_key NULL) are
-- untouched: they are never held and no statement of theirs changed.

ALTER TABLE citeq_messages
    ADD COLUMN group_key text,      -- the group (NULL: no group)
    ADD COLUMN group_limit integer, -- the actor's group_concurrency at send
    ADD COLUMN group_seq bigint,    -- place in the key's order; a retry keeps its first send's
    ADD CONSTRAINT citeq_messages_group_complete CHECK (
        (group_key IS NULL) = (group_limit IS NULL) AND (group_key IS NULL) = (group_seq IS NULL)),
    ADD CONSTRAINT citeq_messages_group_limit_positive CHECK (group_limit >= 1),
    ADD CONSTRAINT citeq_messages_held_only_in_groups CHECK (state <> 'held' OR group_key IS NOT NULL);

CREATE SEQUENCE citeq_group_seq AS bigint;

-- The key's waiting line, head first.
CREATE INDEX citeq_messages_group_held ON citeq_messages (queue_name, group_key, group_seq)
    WHERE state = 'held';
-- What a key has in flight (counted at every send and promotion of the key).
CREATE INDEX citeq_messages_group_in_flight ON citeq_messages (queue_name, group_key)
    WHERE state IN ('queued', 'running') AND group_key IS NOT NULL;
-- group_concurrency 1: two messages of a key in flight are impossible, whatever the code does.
CREATE UNIQUE INDEX citeq_messages_group_one_in_flight ON citeq_messages (queue_name, group_key)
    WHERE state IN ('queued', 'running') AND group_limit = 1;
