-- Message groups with manual release (issue 25), part 2. A grouped message sent with
-- group_release 'manual' holds its key's slot from the moment it runs until the application
-- releases it by a named call (broker/store.py: MessageStore.release_many), not when its
-- handler returns: its success acks it into 'parked', and a dead letter of it keeps the slot
-- too (the application decides when the work it started is over). Releasing it finishes a
-- parked or running one ('done'), withdraws one not yet delivered (deleted), and marks a dead
-- one 'released' (it stays a dead letter); the key's next message is promoted under the key's
-- lock in the same statement.
--
-- "Holds a slot of its key" is, everywhere (the indexes below, every grouped statement of
-- broker/queries.sql, the view citeq_group_slots):
--     state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual')

ALTER TABLE citeq_messages
    ADD COLUMN group_release text,  -- NULL: its ack releases the slot; 'manual'; 'released' (a dead letter released)
    ADD CONSTRAINT citeq_messages_group_release_known CHECK (group_release IN ('manual', 'released')),
    ADD CONSTRAINT citeq_messages_group_release_in_groups CHECK (group_release IS NULL OR group_key IS NOT NULL),
    ADD CONSTRAINT citeq_messages_parked_only_manual CHECK (state <> 'parked' OR group_release = 'manual');

DROP INDEX citeq_messages_group_in_flight;
CREATE INDEX citeq_messages_group_in_flight ON citeq_messages (queue_name, group_key)
    WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
      AND group_key IS NOT NULL;
DROP INDEX citeq_messages_group_one_in_flight;
CREATE UNIQUE INDEX citeq_messages_group_one_in_flight ON citeq_messages (queue_name, group_key)
    WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
      AND group_limit = 1;
-- (The release finds its messages by Dramatiq's message id: citeq_messages_message_id_live.)

-- The messages that hold a slot of their key, for readers outside the broker's statements
-- (the analysis queue's sweeps, operators): the one spelling of the predicate outside them.
CREATE VIEW citeq_group_slots AS
SELECT id, message_id, queue_name, group_key, state, group_release FROM citeq_messages
WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
  AND group_key IS NOT NULL;

-- Whether a message sent now to this key would be born runnable: nothing of the key is held
-- and fewer than lim hold a slot. grouped_message_insert_one decides with it, and so may an
-- application that must know the decision in the same transaction (analysis admission),
-- after taking the key's lock (broker/locks.py).
CREATE FUNCTION citeq_group_has_room(queue text, key text, lim integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT EXISTS (SELECT 1 FROM citeq_messages
                       WHERE state = 'held' AND queue_name = queue AND group_key = key)
       AND (SELECT count(*) FROM (
                SELECT 1 FROM citeq_messages
                WHERE (state IN ('queued', 'running', 'parked') OR (state = 'dead' AND group_release = 'manual'))
                  AND group_key IS NOT NULL AND queue_name = queue AND group_key = key
                LIMIT lim) AS f) < lim
$$;
