-- Sends decide their wake-up in the INSERT statement itself (broker/queries.sql:
-- insert_message, insert_messages), not in a statement trigger (issue 27).
--
-- The trigger captured a transition table of the inserted rows and ran two queries over it
-- and the table: 70-100 us of server CPU on every single send, more than the insert itself
-- without its commit (scripts/bench_profile.py). The statements make the same decision
-- from their own RETURNING rows. A row inserted by other means than these two statements
-- wakes nobody: consumers find it with their next poll (a lost NOTIFY loses nothing).
DROP TRIGGER citeq_messages_notify_insert ON citeq_messages;
DROP FUNCTION citeq_notify_ready();
