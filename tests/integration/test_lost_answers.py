"""Statements that committed while their answer was lost with the connection (issue 11).

The database did the work; the client saw ``DatabaseUnavailable``. Whatever the client
does next must not leave a job unfinished: here the start of an analysis, whose message
used to be acknowledged as skipped while the job it had started stayed running forever.
The statements run on the real database; only their answers are dropped.
"""

from __future__ import annotations

from analysis.settings import PipelineSettings, QueueSettings
from analysis import maintenance
from analysis.queue import userqueue
from broker import DatabaseUnavailable

from tests.conftest import query
from tests.integration.conftest import balance, given_user, running_worker, statuses, wait_for, worker_settings


def lose_start_answers(monkeypatch, times: int) -> list[int]:
    """The next ``times`` job starts commit, and their callers see the connection break."""
    start_jobs, lost = userqueue.start_jobs, []

    def answer_lost(starts, **kwargs):
        rows = start_jobs(starts, **kwargs)
        if len(lost) < times:
            lost.append(len(starts))
            raise DatabaseUnavailable("server closed the connection unexpectedly")
        return rows

    monkeypatch.setattr(userqueue, "start_jobs", answer_lost)
    return lost


def test_a_start_whose_answer_was_lost_is_tried_again_and_the_job_runs(queue_broker, hooked, monkeypatch):
    thesis, sources = given_user(hooked, 1, credits=2)
    first = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    second = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    lost = lose_start_answers(monkeypatch, times=1)

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: statuses(hooked, 1) == [(first.job_id, "succeeded"), (second.job_id, "succeeded")],
                 timeout=30, message="both jobs ran")

    assert lost == [1]
    assert query(hooked, "SELECT count(*) FROM test_runs WHERE job_id = %s", first.job_id)[0][0] == 1
    assert balance(hooked, 1) == 0


def test_a_start_that_keeps_failing_dead_letters_its_message_and_the_sweeper_ends_the_job(
        queue_broker, hooked, monkeypatch):
    thesis, sources = given_user(hooked, 1, credits=2)
    first = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    second = userqueue.admit(1, thesis, sources, settings=worker_settings().queue)
    lost = lose_start_answers(monkeypatch, times=3)  # every attempt of the first message

    with running_worker(queue_broker, threads=2):
        wait_for(lambda: query(hooked, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'")[0][0] == 1,
                 timeout=30, message="the first job's message dead-lettered")
        # The start had committed: the job is running, and nothing but a sweeper can end it.
        assert statuses(hooked, 1) == [(first.job_id, "running"), (second.job_id, "queued")]
        assert maintenance.recover_lost_work(settings=worker_settings().queue,
                                             pipeline_settings=worker_settings().pipeline)["failed"] == 1
        wait_for(lambda: statuses(hooked, 1)[1] == (second.job_id, "succeeded"), timeout=30,
                 message="the user's next job ran")

    assert lost == [1, 1, 1]
    reason = query(hooked, "SELECT failure_reason FROM analysis_jobs WHERE id = %s", first.job_id)[0][0]
    assert reason.startswith("worker_lost") and "could not start job" in reason
    assert statuses(hooked, 1)[0] == (first.job_id, "failed")
    assert balance(hooked, 1) == 1  # the failed job refunded, the other charged
