-- The held messages of a key in the key's order, (group_seq, id), so that "the key's next
-- held message" reads one index entry.
--
-- Every promotion (grouped_messages_finish_many, grouped_messages_exchange_many,
-- grouped_messages_release_many) asks for the key's held messages ORDER BY group_seq, id
-- (a retry keeps its first send's group_seq, so ids break ties). On an index of
-- (queue_name, group_key, group_seq) that order is not the index's: the plan read every held
-- message of the key and sorted them, per key promoted. A drain of 10,000 messages over 100
-- keys read about 60 entries per promotion (0.18 ms per key in auto_explain on PostgreSQL
-- 15); a key with 10,000 waiting messages would read 10,000.
--
-- Building it reads the messages table once (the index holds the held rows only), and sends
-- wait for that build: on a table of millions of unpruned rows, migrate at a quiet moment.
CREATE INDEX citeq_messages_group_held_ordered ON citeq_messages (queue_name, group_key, group_seq, id)
    WHERE state = 'held';
DROP INDEX citeq_messages_group_held;
ALTER INDEX citeq_messages_group_held_ordered RENAME TO citeq_messages_group_held;
