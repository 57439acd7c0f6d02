-- Message groups (issue 25), part 1: the state of a message that waits for its group's turn.
-- A value added to an enum cannot be used in the transaction that adds it, and each
-- migration is one transaction: the columns and indexes that use it are in 0021.

ALTER TYPE citeq_message_state ADD VALUE IF NOT EXISTS 'held' BEFORE 'queued';
    -- 'held': a message of a group (group_key) waiting behind earlier messages of its key;
    -- the claim never reads it (it is not 'queued'), so held messages cost a claim nothing.
