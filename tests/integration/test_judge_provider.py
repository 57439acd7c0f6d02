"""The LLM judge in the pipeline, on a real Postgres, against the loopback fake provider:
permanent provider errors fail the job at once with a typed reason and one refund, bad
answers end `uncertain` instead of failing the job, the token budget per job holds, and the
API key never reaches a log line, a failure reason or a dead letter."""

from __future__ import annotations

import logging

import pytest

from analysis.pipeline import analyze as pipeline
from tests.conftest import query
from tests.fakes.openai_server import FakeChatServer
from tests.integration.conftest import (
    configure_worker, job_status, reread_worker_settings, running_worker, sample_files, wait_for,
)
from tests.integration.test_pipeline import judge_all, parsed_session, start_analysis

KEY = "sk-live-0123456789abcdefSECRET"
FILES = ("thesis_urban_heat.pdf", "nakamura_heat_notes.txt", "castillo_2018_green_roofs.pdf")


@pytest.fixture
def provider(monkeypatch):
    """The fake provider configured as this process's judge (the judge cache cleared around it)."""
    with FakeChatServer() as server:
        for name, value in (("CITEQ_JUDGE", "openai"), ("CITEQ_JUDGE_BASE_URL", server.base_url),
                            ("CITEQ_JUDGE_MODEL", "fake-model"), ("CITEQ_JUDGE_API_KEY", KEY)):
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("CITEQ_EMBEDDINGS_MODEL", raising=False)
        reread_worker_settings()
        pipeline._judges.clear()
        yield server
        pipeline._judges.clear()


def analysis_of_heat_thesis(queue_broker, conn, user_id: int = 1) -> int:
    """Given the heat thesis and its sources parsed, an analysis extracted: its job id."""
    _, docs = parsed_session(queue_broker, conn, user_id, [
        *sample_files(FILES[0], kind="thesis"), *sample_files(*FILES[1:])])
    return start_analysis(conn, queue_broker, user_id, docs[FILES[0]], [docs[n] for n in FILES[1:]])


def to_judge(conn, job_id: int) -> int:
    return query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s AND message_id IS NOT NULL "
                       "AND carried_from_id IS NULL AND source_document_id IS NOT NULL", job_id)[0][0]


@pytest.mark.parametrize(("mode", "reason"), [("unauthorized", "provider_auth_failed"),
                                              ("forbidden", "provider_auth_failed"),
                                              ("unknown_model", "provider_model_not_found")])
def test_a_permanent_provider_error_fails_the_job_at_once_with_its_reason_and_one_refund(
        queue_broker, conn, provider, caplog, mode, reason):
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    assert query(conn, "SELECT judge FROM analysis_jobs WHERE id = %s", job_id) == [("openai:fake-model",)]
    balance = query(conn, "SELECT credits FROM accounts WHERE user_id = 1")[0][0]
    provider.mode = mode

    # When a worker judges the citations
    with caplog.at_level(logging.DEBUG), running_worker(queue_broker, threads=2):
        wait_for(lambda: job_status(conn, job_id) == "failed", timeout=30, message="job failed")
        wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_messages WHERE actor_name = 'judge_citation' "
                                     "AND state IN ('queued', 'running')")[0][0] == 0,
                 timeout=30, message="judge messages done")

    # Then the job failed with the typed reason, without the key, refunded exactly once
    (failure,) = query(conn, "SELECT failure_reason FROM analysis_jobs WHERE id = %s", job_id)[0]
    assert failure.startswith(f"{reason}:") and KEY not in failure
    assert query(conn, "SELECT count(*) FROM credit_ledger WHERE job_id = %s AND kind = 'refund'", job_id) == [(1,)]
    assert query(conn, "SELECT credits FROM accounts WHERE user_id = 1")[0][0] == balance + 1
    # And no judge message went to the dead letters, none was retried
    assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'") == [(0,)]
    assert provider.request_count <= to_judge(conn, job_id)
    assert KEY not in caplog.text and "SECRET" not in caplog.text


@pytest.mark.parametrize("mode", ["garbage", "truncated", "refusal", "bad_page", "bad_quote"])
def test_bad_answers_end_uncertain_and_the_job_succeeds(queue_broker, conn, provider, mode):
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    provider.mode = mode

    judge_all(conn, job_id, queue_broker)

    assert job_status(conn, job_id) == "succeeded"
    rows = query(conn, "SELECT verdict::text, rationale FROM job_citations WHERE job_id = %s "
                       "AND source_document_id IS NOT NULL", job_id)
    assert rows and {v for v, _ in rows} == {"uncertain"}
    answers = 1 if mode == "bad_quote" else 3  # a made-up quote is an answer; the rest are asked again
    assert provider.request_count == answers * len(rows)
    assert query(conn, "SELECT judge_tokens_used FROM analysis_jobs WHERE id = %s", job_id) == [
        (answers * len(rows) * provider.tokens_per_answer,)]


def test_good_answers_are_recorded_with_their_verified_quote_and_page(queue_broker, conn, provider):
    job_id = analysis_of_heat_thesis(queue_broker, conn)

    judge_all(conn, job_id, queue_broker)

    assert job_status(conn, job_id) == "succeeded"
    rows = query(conn, "SELECT c.verdict::text, c.evidence, c.evidence_page, "
                       "EXISTS (SELECT 1 FROM chunks k WHERE k.document_id = c.source_document_id "
                       "        AND k.page = c.evidence_page AND strpos(k.text, c.evidence) > 0) "
                       "FROM job_citations c WHERE c.job_id = %s AND c.source_document_id IS NOT NULL", job_id)
    assert rows and all(r[0] == "supported" and r[1] and r[3] for r in rows)


def test_the_token_budget_of_a_job_stops_its_calls_once_spent(queue_broker, conn, provider, monkeypatch):
    configure_worker(pipeline={"judge_token_budget": 1500})
    provider.tokens_per_answer = 1000
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    citations = to_judge(conn, job_id)
    assert citations >= 3

    judge_all(conn, job_id, queue_broker)

    # Then two calls were made (0 < 1500, 1000 < 1500), the rest are uncertain without a call
    assert provider.request_count == 2
    assert job_status(conn, job_id) == "succeeded"
    assert query(conn, "SELECT judge_tokens_used FROM analysis_jobs WHERE id = %s", job_id) == [(2000,)]
    spent = query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s AND verdict = 'uncertain' "
                        "AND rationale LIKE '%%token budget of the job spent%%'", job_id)[0][0]
    assert spent == citations - 2


@pytest.mark.parametrize("mode", ["echo_key", "unauthorized"])
def test_the_key_echoed_by_a_provider_never_reaches_logs_failure_reasons_or_dead_letters(
        queue_broker, conn, provider, caplog, mode):
    job_id = analysis_of_heat_thesis(queue_broker, conn)
    provider.mode = mode  # a 500 (transient) or a 401 (permanent) whose body echoes the key
    # Given the job's judge messages on their last retry, so a failing one is dead-lettered at once
    query(conn, "DELETE FROM citeq_messages WHERE actor_name = 'judge_citation'")
    ordinals = [r[0] for r in query(conn, "SELECT ordinal FROM job_citations WHERE job_id = %s AND verdict IS NULL",
                                    job_id)]
    from actors.pipeline import JUDGE_RETRIES

    actor = queue_broker.get_actor(pipeline.JUDGE_ACTOR)
    queue_broker.enqueue_many([actor.message_with_options(args=(job_id, o), retries=JUDGE_RETRIES)
                               for o in ordinals])

    with caplog.at_level(logging.DEBUG), running_worker(queue_broker, threads=2):
        wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_messages WHERE actor_name = 'judge_citation' "
                                     "AND state IN ('queued', 'running')")[0][0] == 0,
                 timeout=30, message="judge messages done")

    dead = query(conn, "SELECT dead_reason, convert_from(payload, 'UTF8') FROM citeq_messages WHERE state = 'dead'")
    (failure,) = query(conn, "SELECT coalesce(failure_reason, '') FROM analysis_jobs WHERE id = %s", job_id)[0]
    if mode == "echo_key":  # retries exhausted: dead letters whose reason shows the redacted error
        assert len(dead) == len(ordinals)
        assert all("ProviderUnavailable" in reason and "[redacted]" in reason for reason, _ in dead)
    else:  # permanent: the job failed at once, nothing dead-lettered
        assert dead == [] and failure.startswith("provider_auth_failed") and "[redacted]" in failure
    for text in [failure, caplog.text, *(r for row in dead for r in row)]:
        assert KEY not in text and "SECRET" not in text
