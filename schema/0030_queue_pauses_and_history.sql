-- Operator controls and history of the broker's queues (the dashboard's operator view).

-- A paused queue: consumers claim nothing from it (exchange_messages reads this table) until
-- the row is deleted. Sending to a paused queue still works; its messages wait.
CREATE TABLE citeq_queue_pauses (
    queue_name text PRIMARY KEY,
    paused_at  timestamptz NOT NULL DEFAULT now(),
    paused_by  text                                -- who paused it, as the operator said
);

-- Messages that left a queue, per queue and minute, folded in when they leave the messages
-- table (acknowledged ones pruned after the retention, dead letters purged or retried), so
-- "processed / failed in the last hour" stays right whatever the retention and whatever the
-- operator cleaned up. Rows older than a day are dropped by the same prune.
CREATE TABLE citeq_queue_history (
    queue_name text NOT NULL,
    minute     timestamptz NOT NULL,
    processed  bigint NOT NULL DEFAULT 0,   -- acknowledged
    failed     bigint NOT NULL DEFAULT 0,   -- dead-lettered
    PRIMARY KEY (queue_name, minute)
);
