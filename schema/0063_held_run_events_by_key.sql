-- A held run's audit trigger finds each event's user by the job's key (issue 27).
--
-- held_runs_audit_update (0016) joined its events with analysis_jobs for the user id. A
-- trigger's query is planned once per session, with the transition tables' sizes and the
-- table statistics of that moment, and in the queue benchmark's drains (400 users x 5 jobs,
-- scripts/bench_queue_profile.py) that plan read analysis_jobs through its primary key and
-- re-ran the join of the transition tables for every job it met: the largest part of the
-- server's CPU per job (perf: the trigger's hash joins rescanned, 100-200 job rows read per
-- job started). A scalar subquery per event is one lookup by key, whatever the plan.
--
-- Same events, same checks: a change held_run_transitions does not list still fails in
-- lifecycle_refuse, 'released' and 'release_deferred' are written as before. The job always
-- exists (held_runs.job_id references it, ON DELETE CASCADE), so no event was ever dropped
-- by the join; should one lack its job, the NOT NULL user_id now says so.
CREATE OR REPLACE FUNCTION held_runs_audit_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO analysis_job_events (job_id, user_id, event, detail)
    SELECT e.job_id, (SELECT j.user_id FROM analysis_jobs j WHERE j.id = e.job_id), e.event, e.detail FROM (
        SELECT n.job_id,
               CASE WHEN t.from_status IS NULL
                    THEN lifecycle_refuse('held run of job', n.job_id, o.status::text, n.status::text)
                    WHEN n.status = 'released' THEN 'released'::analysis_job_event_kind END AS event,
               NULL AS detail
        FROM before_change o JOIN after_change n USING (job_id)
        LEFT JOIN held_run_transitions t ON t.from_status = o.status AND t.to_status = n.status
        WHERE o.status <> n.status
        UNION ALL
        SELECT n.job_id, 'release_deferred', n.last_error
        FROM before_change o JOIN after_change n USING (job_id)
        WHERE n.release_attempts > o.release_attempts
    ) AS e
    WHERE e.event IS NOT NULL
    ORDER BY e.job_id;
    RETURN NULL;
END $$;
