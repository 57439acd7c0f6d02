-- When the judge provider started failing a job's calls (issue 29).
--
-- A provider answering 500 to every call kept a job `running` for about seven minutes
-- (five retries per judge message, then the stall sweeper's re-dispatches) before it failed
-- `judge_failed`. A transient provider error now records the first failure since the job's
-- last provider verdict here, and a verdict from the provider clears it; a failure that
-- finds the provider failing for CITEQ_JUDGE_OUTAGE_SECONDS fails the job
-- `provider_unavailable` (refunded). NULL: no failure since the last provider answer.
ALTER TABLE analysis_jobs ADD COLUMN IF NOT EXISTS provider_failing_since timestamptz;
