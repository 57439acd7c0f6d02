-- Message groups, a message that keeps its key's slot after its handler returned (issue 25,
-- the analysis queue as the first user of groups), part 1: its state. A value added to an
-- enum cannot be used in the transaction that adds it, and each migration is one
-- transaction: the columns, indexes and functions that use it are in 0065.

ALTER TYPE citeq_message_state ADD VALUE IF NOT EXISTS 'parked' AFTER 'running';
    -- 'parked': a message of a group sent with group_release 'manual' whose handler
    -- succeeded; it keeps its key's slot (counts as in flight) until the application
    -- releases it (MessageStore.release_many). No lease, never delivered, never pruned.
