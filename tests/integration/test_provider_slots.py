"""Provider concurrency slots belong to a live holder (issue 11): a SIGKILLed worker's
slots come free when its heartbeat lapses, not after a TTL, and a judge that finds every
slot taken hands its citation to a later message without burning a retry."""

from __future__ import annotations

from analysis.pipeline.providers import budget
from analysis.pipeline import analyze as pipeline
from analysis.pipeline.judging.llm import OpenAIJudge
from analysis.queue import userqueue
from analysis.settings import PipelineSettings
from tests.conftest import query
from tests.fakes.openai_server import FakeChatServer
from tests.integration.conftest import THESES
from tests.integration.test_pipeline import parsed_session, start_analysis


def given_worker(conn, worker_id: str, seconds_since_seen: float) -> None:
    query(conn, "INSERT INTO citeq_workers (worker_id, hostname, pid, queues, last_seen_at) "
                "VALUES (%s, 'h', 1, '{judge}', now() - %s * interval '1 second')", worker_id, seconds_since_seen)


def given_slot(conn, slot: int, holder: str, *, registered: bool = True) -> None:
    query(conn, "INSERT INTO provider_slots (provider, slot, holder, registered, token, expires_at) "
                "VALUES ('openai', %s, %s, %s, gen_random_uuid(), now() + interval '5 minutes')",
          slot, holder, registered)


def test_slots_of_a_worker_whose_heartbeat_lapsed_are_free_within_their_ttl(broker, conn):
    slots = budget.ProviderSlots(broker, "openai", 2)
    # Given one slot held by a heartbeating worker and one by a worker silent for a lease
    given_worker(conn, "alive", 0)
    given_worker(conn, "killed", broker.settings.lease_seconds + 1)
    given_slot(conn, 0, "alive")
    given_slot(conn, 1, "killed")

    taken = slots.take()

    assert taken is not None and taken[0] == 1
    assert slots.take() is None  # the live holder's slot stays taken
    assert [(s, alive) for s, _, alive in slots.held()] == [(0, True), (1, True)]


def test_a_holder_that_never_registered_keeps_its_slot_until_release(broker, conn):
    slots = budget.ProviderSlots(broker, "openai", 1)
    given_slot(conn, 0, "a script", registered=False)

    assert slots.take() is None


def test_a_release_lost_to_the_database_is_reclaimed_by_the_holders_next_take(broker, conn):
    slots = budget.ProviderSlots(broker, "openai", 1)
    slot, token = slots.take()
    # Given the release never reached the database (but the process knows it let go)
    budget.ProviderSlots._mine.discard(token)

    assert slots.take() is not None


def test_a_judge_finding_every_slot_taken_hands_its_citation_to_a_later_message(queue_broker, conn):
    session, docs = parsed_session(queue_broker, conn, 1)
    sources = [docs[n] for n in docs if not n.startswith("thesis")]
    job_id = start_analysis(conn, queue_broker, 1, docs[THESES[0]], sources)
    ordinal, old_message, dispatches = query(
        conn, "SELECT ordinal, message_id, dispatches FROM job_citations WHERE job_id = %s "
              "AND source_document_id IS NOT NULL ORDER BY ordinal LIMIT 1", job_id)[0]
    settings = PipelineSettings(judge_concurrency=1, judge_slot_wait_seconds=0)
    elsewhere = budget.ProviderSlots(queue_broker, "openai", 1)

    with FakeChatServer() as server, elsewhere.hold(wait_seconds=0):
        judge = OpenAIJudge(base_url=server.base_url, model="m")
        outcome = pipeline.judge_citation(job_id, ordinal, settle=userqueue.settle, broker=queue_broker, judge=judge,
                                          settings=settings)

    assert outcome == "waiting" and server.request_count == 0
    new_message, now_dispatches = query(conn, "SELECT message_id, dispatches FROM job_citations "
                                              "WHERE job_id = %s AND ordinal = %s", job_id, ordinal)[0]
    assert new_message != old_message and now_dispatches == dispatches
    (state, eta_ahead, attempts), = query(
        conn, "SELECT state::text, eta > now(), attempts FROM citeq_messages WHERE message_id = %s", new_message)
    assert state == "queued" and eta_ahead and attempts == 0
