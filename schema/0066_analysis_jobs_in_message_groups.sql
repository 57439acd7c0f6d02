-- The per-user analysis queue runs on message groups (issue 25): a first-pass job's analyze
-- message is sent grouped by its user (key 'user:<id>', group_release 'manual') at admission,
-- and that message holds the user's turn until the job ends, when the job's end releases it
-- (analysis/queue/userqueue.py). The job row keeps the message's id: job.message_id changes
-- when a held-run release is retried (a new, ungrouped message), this one does not.

ALTER TABLE analysis_jobs ADD COLUMN slot_message_id text;  -- NULL: a delta re-check (no turn)
CREATE INDEX analysis_jobs_slot_message ON analysis_jobs (slot_message_id) WHERE slot_message_id IS NOT NULL;

COMMENT ON COLUMN analysis_jobs.slot_message_id IS
    'the grouped analyze message that holds the user''s turn (citeq_group_slots) until the job ends';
