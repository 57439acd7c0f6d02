"""Running the queue: strict order per user, no overlap, delta bypass, failures, sweepers."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from analysis import maintenance
from analysis.queue import sweepers, userqueue
from analysis.queue.jobs import JobStatus

from tests.conftest import query
from tests.e2e import hooks
from tests.integration.conftest import (
    assert_no_overlap, balance, configure_worker, given_user, running_worker, statuses, wait_for, worker_settings,
)


def status(conn, job_id) -> str:
    return query(conn, "SELECT status::text FROM analysis_jobs WHERE id = %s", job_id)[0][0]


def events(conn, job_id) -> list[str]:
    return [r[0] for r in query(conn, "SELECT event FROM analysis_job_events WHERE job_id = %s ORDER BY id", job_id)]


def all_done(conn, user_id=None):
    return query(conn, "SELECT count(*) = 0 FROM analysis_jobs WHERE status NOT IN ('succeeded', 'failed', 'canceled') "
                       "AND (%s::bigint IS NULL OR user_id = %s)", user_id, user_id)[0][0]


def test_sixteen_concurrent_admissions_run_in_order_without_overlap(queue_broker, queue_worker, hooked):
    thesis, sources = given_user(hooked, 1, credits=16)
    barrier = threading.Barrier(16)

    def click():
        barrier.wait()
        userqueue.admit(1, thesis, sources, options={"seconds": 0.02}, settings=worker_settings().queue)

    threads = [threading.Thread(target=click) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    wait_for(lambda: all_done(hooked), message="all 16 jobs finished")
    assert {s for _, s in statuses(hooked, 1)} == {"succeeded"}
    started = [r[0] for r in query(hooked, "SELECT job_id FROM test_runs ORDER BY started_at")]
    assert started == sorted(started), "ran in admission order"
    assert_no_overlap(hooked, 1)
    assert balance(hooked, 1) == 0


def test_another_users_job_starts_while_the_first_user_has_four_queued(queue_broker, queue_worker, hooked):
    a_thesis, a_sources = given_user(hooked, 1)
    b_thesis, b_sources = given_user(hooked, 2)
    a_jobs = [userqueue.admit(1, a_thesis, a_sources, options={"hold": "release_a"},
                              settings=worker_settings().queue) for _ in range(5)]
    wait_for(lambda: status(hooked, a_jobs[0].job_id) == "running")

    b_job = userqueue.admit(2, b_thesis, b_sources, settings=worker_settings().queue)

    wait_for(lambda: status(hooked, b_job.job_id) == "succeeded", message="B's job finished")
    assert [s for _, s in statuses(hooked, 1)] == ["running"] + ["queued"] * 4
    hooks.set_flag(hooked, "release_a")
    wait_for(lambda: all_done(hooked, 1), message="A's jobs finished")
    assert_no_overlap(hooked, 1)


def test_delta_recheck_runs_while_the_first_pass_job_runs(queue_broker, queue_worker, hooked):
    thesis, sources = given_user(hooked, 1)
    first = userqueue.admit(1, thesis, sources, options={"hold": "delta_done"}, settings=worker_settings().queue)
    queued = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    wait_for(lambda: status(hooked, first.job_id) == "running")

    delta = userqueue.admit(1, thesis, sources, delta_of_job_id=first.job_id, settings=worker_settings().queue)

    wait_for(lambda: status(hooked, delta.job_id) == "succeeded", message="delta finished")
    assert status(hooked, first.job_id) == "running" and status(hooked, queued.job_id) == "queued"
    hooks.set_flag(hooked, "delta_done")
    wait_for(lambda: all_done(hooked), message="queue drained")
    assert "promoted" not in events(hooked, delta.job_id)


def test_the_analyze_actor_hands_its_outcome_back_without_a_results_warning(queue_broker, queue_worker, hooked,
                                                                            caplog):
    # Returning the outcome made Dramatiq log "Consider adding the Results middleware" for
    # every job (and cost each one a log line through the worker's pipe).
    thesis, sources = given_user(hooked, 1, credits=2)
    with caplog.at_level("WARNING"):
        jobs = [userqueue.admit(1, thesis, sources, settings=worker_settings().queue).job_id for _ in range(2)]
        wait_for(lambda: all_done(hooked), message="both finished")
    assert statuses(hooked, 1) == [(jobs[0], "succeeded"), (jobs[1], "succeeded")]
    assert not [r for r in caplog.records if "returned a value" in r.getMessage()]


def test_a_failing_analysis_is_refunded_and_the_queue_moves_on(queue_broker, queue_worker, hooked):
    thesis, sources = given_user(hooked, 1, credits=2)
    broken = userqueue.admit(1, thesis, sources, options={"fail": True}, settings=worker_settings().queue)
    fine = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)

    wait_for(lambda: all_done(hooked), message="both finished")

    assert statuses(hooked, 1) == [(broken.job_id, "failed"), (fine.job_id, "succeeded")]
    assert "RuntimeError" in query(hooked, "SELECT failure_reason FROM analysis_jobs WHERE id = %s", broken.job_id)[0][0]
    assert balance(hooked, 1) == 1


def test_work_is_chosen_by_its_registered_name_and_an_unknown_name_fails_the_job(queue_broker, queue_worker,
                                                                                 hooked, monkeypatch):
    thesis, sources = given_user(hooked, 1, credits=2)
    configure_worker(queue={"analyze_work": "tests.e2e.hooks:work"})  # an import path is no name
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)

    wait_for(lambda: all_done(hooked), message="job finished")

    (reason,), = query(hooked, "SELECT failure_reason FROM analysis_jobs WHERE id = %s", job.job_id)
    assert reason.startswith("LookupError: no work is registered as 'tests.e2e.hooks:work'"), reason
    assert "hooks" in reason and "pipeline" in reason  # what is registered, named
    assert query(hooked, "SELECT count(*) FROM test_runs")[0][0] == 0
    assert balance(hooked, 1) == 2  # refunded


def test_a_duplicate_message_is_skipped(queue_broker, hooked):
    thesis, sources = given_user(hooked, 1)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    queue_broker.get_actor("analyze").send(job.job_id)  # a stray second message for the job

    with running_worker(queue_broker, threads=2):
        queue_broker.join("analysis", timeout=20_000)

    assert status(hooked, job.job_id) == "succeeded"
    assert events(hooked, job.job_id).count("started") == 1
    assert query(hooked, "SELECT count(*) FROM test_runs")[0][0] == 1


def test_resume_sweeper_releases_the_turn_of_a_job_that_ended_without_its_release(queue_broker, queue_worker, hooked):
    thesis, sources = given_user(hooked, 1)
    first = userqueue.admit(1, thesis, sources, options={"hold": "never"}, settings=worker_settings().queue)
    second = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    wait_for(lambda: status(hooked, first.job_id) == "running")
    # The first job's end committed without its release (the process died right after):
    query(hooked, "UPDATE analysis_jobs SET status = 'succeeded', finished_at = now() WHERE id = %s", first.job_id)
    assert status(hooked, second.job_id) == "queued"

    assert sweepers.resume(settings=worker_settings().queue) == {"stalled_users": 1, "resent": 0}
    # A second sweep (another scheduler) finds nothing left to do.
    assert sweepers.resume(settings=worker_settings().queue) == {"stalled_users": 0, "resent": 0}
    hooks.set_flag(hooked, "never")

    wait_for(lambda: status(hooked, second.job_id) == "succeeded", message="second job ran")
    assert events(hooked, second.job_id).count("promoted") == 1


def test_resume_sweeper_releases_a_turn_held_by_a_dead_letter_of_an_ended_job(queue_broker, hooked):
    thesis, sources = given_user(hooked, 1)
    first = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    second = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    # The first job ended without its release, and its message then died (out of deliveries):
    # a dead letter of a manual release holds the user's turn until it is released.
    query(hooked, "UPDATE analysis_jobs SET status = 'running', started_at = now() WHERE id = %s", first.job_id)
    query(hooked, "UPDATE analysis_jobs SET status = 'succeeded', finished_at = now() WHERE id = %s", first.job_id)
    query(hooked, "UPDATE citeq_messages SET state = 'dead', finished_at = now() "
                  "WHERE message_id = (SELECT message_id FROM analysis_jobs WHERE id = %s)", first.job_id)
    assert queue_broker.group_sweeper.run_once() == 0, "the broker alone does not free the turn"

    assert sweepers.resume(settings=worker_settings().queue)["stalled_users"] == 1
    assert sweepers.resume(settings=worker_settings().queue)["stalled_users"] == 0
    assert status(hooked, second.job_id) == "pending"

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: status(hooked, second.job_id) == "succeeded", message="second job ran")
    assert events(hooked, second.job_id).count("promoted") == 1


def test_resume_sweeper_resends_a_pending_job_whose_message_is_lost(queue_broker, hooked):
    thesis, sources = given_user(hooked, 1)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    query(hooked, "DELETE FROM citeq_messages")

    assert sweepers.resume(settings=worker_settings().queue)["resent"] == 1
    assert sweepers.resume(settings=worker_settings().queue)["resent"] == 0

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: status(hooked, job.job_id) == "succeeded")


def test_stall_sweeper_fails_a_job_whose_message_died_and_refunds_once(queue_broker, hooked):
    thesis, sources = given_user(hooked, 1, credits=2)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    nxt = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    # The job started, then its workers kept dying until the deliveries ran out.
    message_id = query(hooked, "SELECT message_id FROM analysis_jobs WHERE id = %s", job.job_id)[0][0]
    assert userqueue.start_job(job.job_id, message_id, settings=worker_settings().queue) is not None
    query(hooked, "UPDATE citeq_messages SET state = 'dead', dead_reason = 'lease expired', finished_at = now() "
                  "WHERE message_id = %s", message_id)

    settings = worker_settings()
    first, second = (maintenance.recover_lost_work(settings=settings.queue, pipeline_settings=settings.pipeline)
                     for _ in range(2))

    assert first["failed"] == 1 and second["failed"] == 0
    assert status(hooked, job.job_id) == "failed" and status(hooked, nxt.job_id) == "pending"
    assert balance(hooked, 1) == 1


def _hold_release_failing(conn, monkeypatch, window=600.0):
    configure_worker(queue={"release_window_seconds": window, "release_backoff_base": 1})
    hooks.set_flag(conn, "provider_down")


def test_release_timeout_after_the_window_refunds_exactly_once(queue_broker, queue_worker, hooked, monkeypatch):
    _hold_release_failing(hooked, monkeypatch)
    thesis, sources = given_user(hooked, 1, credits=2)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    nxt = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    wait_for(lambda: "release_deferred" in events(hooked, job.job_id))
    assert status(hooked, job.job_id) == "running" and status(hooked, nxt.job_id) == "queued"

    # Retries inside the window, with growing, jittered delays (the clock moves, no sleeping).
    now = datetime.now(timezone.utc)
    delays = []
    for step in range(1, 5):
        now += timedelta(seconds=20)
        assert sweepers.retry_releases(now=now, settings=worker_settings().queue) == {"retried": 1, "expired": 0}
        wait_for(lambda s=step: events(hooked, job.job_id).count("release_deferred") == s + 1)
        attempts, next_at = query(hooked, "SELECT release_attempts, next_attempt_at FROM held_runs WHERE job_id = %s",
                                  job.job_id)[0]
        delays.append((next_at - datetime.now(timezone.utc)).total_seconds())
    assert attempts == 5
    assert delays[-1] > delays[0], "exponential backoff"
    assert all(d <= 300 for d in delays), "capped"

    # After the window: release_timeout, one refund, the queue moves on — even with two sweeps.
    hooks.set_flag(hooked, "provider_down", False)  # so that the next job's release passes
    later = now + timedelta(seconds=600)
    results = []
    settings = worker_settings().queue
    sweeps = [threading.Thread(target=lambda: results.append(sweepers.retry_releases(now=later, settings=settings)))
              for _ in range(2)]
    for t in sweeps:
        t.start()
    for t in sweeps:
        t.join()
    assert sum(r["expired"] for r in results) == 1
    assert query(hooked, "SELECT status::text, failure_reason FROM analysis_jobs WHERE id = %s", job.job_id) == [
        ("failed", "release_timeout")]
    assert query(hooked, "SELECT count(*) FROM credit_ledger WHERE job_id = %s AND kind = 'refund'", job.job_id)[0][0] == 1
    assert query(hooked, "SELECT status::text FROM held_runs WHERE job_id = %s", job.job_id)[0][0] == "expired"
    wait_for(lambda: status(hooked, nxt.job_id) == "succeeded", message="next job ran")
    assert balance(hooked, 1) == 1


def test_release_succeeds_when_the_provider_returns_inside_the_window(queue_broker, queue_worker, hooked, monkeypatch):
    _hold_release_failing(hooked, monkeypatch)
    thesis, sources = given_user(hooked, 1)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    wait_for(lambda: "release_deferred" in events(hooked, job.job_id))

    hooks.set_flag(hooked, "provider_down", False)
    assert sweepers.retry_releases(now=datetime.now(timezone.utc) + timedelta(seconds=30),
                                   settings=worker_settings().queue)["retried"] == 1

    wait_for(lambda: status(hooked, job.job_id) == "succeeded", message="job ran after the release")
    assert events(hooked, job.job_id)[-3:] == ["started", "released", "succeeded"]
    assert balance(hooked, 1) == 9


def test_complete_job_hook_promotes_in_the_same_transaction(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    second = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    message_id = query(conn, "SELECT message_id FROM analysis_jobs WHERE id = %s", first.job_id)[0][0]
    userqueue.start_job(first.job_id, message_id, settings=worker_settings().queue)

    assert userqueue.complete_job(first.job_id, JobStatus.SUCCEEDED) is True
    assert userqueue.complete_job(first.job_id, JobStatus.SUCCEEDED) is False

    assert statuses(conn, 1) == [(first.job_id, "succeeded"), (second.job_id, "pending")]
    assert query(conn, "SELECT f.at < p.at FROM analysis_job_events f, analysis_job_events p "
                       "WHERE f.job_id = %s AND f.event = 'succeeded' AND p.job_id = %s AND p.event = 'promoted'",
                 first.job_id, second.job_id)[0][0]


def test_a_job_that_ends_releases_its_turn_and_the_next_message_runs_in_the_same_transaction(queue_broker, conn):
    thesis, sources = given_user(conn, 1)
    first, second, third = (userqueue.admit(1, thesis, sources, settings=worker_settings().queue) for _ in range(3))
    message_id = query(conn, "SELECT message_id FROM analysis_jobs WHERE id = %s", first.job_id)[0][0]
    userqueue.start_job(first.job_id, message_id, settings=worker_settings().queue)

    userqueue.complete_job(first.job_id, JobStatus.SUCCEEDED)

    rows = query(conn, "SELECT j.id, j.status::text, m.state::text, j.xmin::text, m.xmin::text FROM analysis_jobs j "
                       "LEFT JOIN citeq_messages m ON m.message_id = j.slot_message_id ORDER BY j.id")
    # The first job's message never ran here (the job was started directly): withdrawn.
    assert [r[:3] for r in rows] == [(first.job_id, "succeeded", None),
                                    (second.job_id, "pending", "queued"),
                                    (third.job_id, "queued", "held")]
    # The job's end, the release, the broker's promotion and the next job's status: one transaction.
    assert rows[0][3] == rows[1][3] == rows[1][4]
    # Ending it twice releases nothing more.
    assert userqueue.complete_job(first.job_id, JobStatus.SUCCEEDED) is False
    assert [r[2] for r in query(conn, "SELECT j.id, j.status::text, m.state::text FROM analysis_jobs j "
                                      "JOIN citeq_messages m ON m.message_id = j.slot_message_id ORDER BY j.id")] == [
        "queued", "held"]


def test_a_deferred_job_keeps_its_turn_parked_until_it_ends(queue_broker, queue_worker, hooked, monkeypatch):
    _hold_release_failing(hooked, monkeypatch)
    thesis, sources = given_user(hooked, 1, credits=2)
    job = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    nxt = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    slot = query(hooked, "SELECT slot_message_id FROM analysis_jobs WHERE id = %s", job.job_id)[0][0]
    wait_for(lambda: query(hooked, "SELECT state::text FROM citeq_messages WHERE message_id = %s", slot) == [
        ("parked",)], message="the deferred job's message parked")
    # Neither the reaper nor the pruning touch it, and the next job waits.
    assert queue_broker.reap(now=datetime.now(timezone.utc) + timedelta(days=1)) == []
    queue_broker.prune()
    assert queue_broker.group_sweeper.run_once() == 0
    assert query(hooked, "SELECT state::text FROM citeq_messages WHERE message_id = %s", slot) == [("parked",)]
    assert status(hooked, nxt.job_id) == "queued"

    # The job ends (its release window ran out): the turn is released, the next job runs.
    hooks.set_flag(hooked, "provider_down", False)
    assert sweepers.retry_releases(now=datetime.now(timezone.utc) + timedelta(hours=1),
                                   settings=worker_settings().queue)["expired"] == 1
    assert query(hooked, "SELECT state::text FROM citeq_messages WHERE message_id = %s", slot) == [("done",)]
    wait_for(lambda: status(hooked, nxt.job_id) == "succeeded", message="next job ran")


def test_one_completion_batch_finishes_jobs_of_several_users_and_promotes_each_next(queue_broker, conn):
    firsts, seconds = {}, {}
    for user in (1, 2, 3):
        thesis, sources = given_user(conn, user)
        firsts[user] = userqueue.admit(user, thesis, sources, settings=worker_settings().queue).job_id
        seconds[user] = userqueue.admit(user, thesis, sources, settings=worker_settings().queue).job_id
    pending = query(conn, "SELECT id, message_id FROM analysis_jobs WHERE status = 'pending' ORDER BY id")
    started = userqueue.start_jobs([*pending, (firsts[1], "a stale message")], settings=worker_settings().queue)
    assert [s is not None for s in started] == [True, True, True, False]

    done = userqueue.complete_jobs([
        userqueue.Completion(firsts[1], 1, JobStatus.SUCCEEDED),
        userqueue.Completion(firsts[2], 2, JobStatus.FAILED, "boom"),
        userqueue.Completion(firsts[3], 3, JobStatus.SUCCEEDED),
        userqueue.Completion(firsts[3], 3, JobStatus.SUCCEEDED),  # the same job twice ends once
    ])

    assert done == [True, True, True, False]
    for user in (1, 2, 3):
        assert [s for _, s in statuses(conn, user)] == ["failed" if user == 2 else "succeeded", "pending"]
        assert events(conn, seconds[user]) == ["admitted", "promoted"]
    assert balance(conn, 2) == 9, "the failed job was refunded, the next one charged"
    sent = query(conn, "SELECT count(*) FROM citeq_messages m JOIN analysis_jobs j ON j.message_id = m.message_id "
                       "WHERE j.id = ANY(%s) AND m.state = 'queued'", list(seconds.values()))[0][0]
    assert sent == 3, "each promoted job's message was sent with the batch's commit"
