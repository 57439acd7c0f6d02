-- A user's jobs, newest first (the API's and the dashboard's job list, polled by clients).
-- Without it the list walked every user's jobs backwards by id, filtering for one user:
-- 11 ms at 200,000 jobs and growing with the table. Each status change writes one more
-- index entry for it (the changes are not HOT anyway); a list that slows as history grows
-- is the worse trade.
CREATE INDEX analysis_jobs_user ON analysis_jobs (user_id, id);
