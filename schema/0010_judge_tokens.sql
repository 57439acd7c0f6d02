-- Provider tokens the judge calls of a job cost (usage.total_tokens, summed over every
-- answer read), checked against CITEQ_JUDGE_TOKEN_BUDGET before each call: once spent,
-- the job's remaining citations are `uncertain` without a call.
ALTER TABLE analysis_jobs ADD COLUMN judge_tokens_used bigint NOT NULL DEFAULT 0;
