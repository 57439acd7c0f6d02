-- Provider-call concurrency slots that belong to a live holder (issue 11). A worker
-- SIGKILLed mid-call used to keep its slots in rate_limit_counters until their 120 s TTL,
-- and the next worker's calls failed as "all slots taken". Each slot is now a row naming
-- its holder: a broker process (citeq_workers.worker_id), whose slots come free as soon as
-- its heartbeat lapses for a lease, as its messages do. A holder that never registered as
-- a worker (a script judging in-process) keeps its slot until expires_at.
CREATE TABLE provider_slots (
    provider    text NOT NULL,
    slot        integer NOT NULL CHECK (slot >= 0),
    holder      text NOT NULL,
    -- the holder had a citeq_workers row when it took the slot: its heartbeat decides
    registered  boolean NOT NULL,
    -- the release is fenced by it: a slot taken over after its holder lapsed is not freed
    -- by that holder's late release
    token       uuid NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (provider, slot)
);
