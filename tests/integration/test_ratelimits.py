"""Dramatiq's own rate limiters on the Postgres backend, and the judge's provider guard."""

from __future__ import annotations

import threading

import pytest
from dramatiq.rate_limits import Barrier, ConcurrentRateLimiter, WindowRateLimiter

from analysis.pipeline.providers import budget
from analysis.pipeline import analyze as pipeline
from analysis.pipeline.judging.llm import OpenAIJudge
from analysis.pipeline.judging.verdicts import Verdict
from broker.ratelimits import PostgresRateLimiterBackend
from analysis.pipeline.retrieval.index import Hit
from analysis.settings import PipelineSettings
from tests.conftest import query
from tests.fakes.openai_server import FakeChatServer
from tests.integration.conftest import wait_for


def test_concurrent_limiter_caps_slots_across_backends(broker):
    one, two = PostgresRateLimiterBackend(broker), PostgresRateLimiterBackend(broker)
    a = ConcurrentRateLimiter(one, "calls", limit=2)
    b = ConcurrentRateLimiter(two, "calls", limit=2)

    with a.acquire(), b.acquire():
        with a.acquire(raise_on_failure=False) as third:
            assert third is False
    with b.acquire(raise_on_failure=False) as again:
        assert again is True


def test_a_barrier_wakes_its_waiter_by_notify_not_by_its_next_look(broker, conn):
    backend = PostgresRateLimiterBackend(broker)
    backend.WAIT_RECHECK = 600.0  # a waiter that is not woken looks again only in ten minutes
    barrier = Barrier(backend, "parties", ttl=60_000)
    assert barrier.create(parties=2)
    passed = []
    waiter = threading.Thread(target=lambda: passed.append(barrier.wait(timeout=120_000)))
    waiter.start()
    # The waiter LISTENs, then looks at the event key, then sleeps on its connection.
    wait_for(lambda: query(conn, "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' "
                                 "AND query LIKE '%%FROM rate_limit_counters WHERE key%%'")[0][0],
             message="the waiter asleep after its first look")
    assert barrier.wait(timeout=1000)  # the second party arrives, sets the event and goes on
    waiter.join(timeout=60)
    assert passed == [True], "the first party was woken by the event's NOTIFY"


def test_concurrent_limiter_never_admits_more_than_its_limit_under_contention(broker):
    backend = PostgresRateLimiterBackend(broker)
    limiter = ConcurrentRateLimiter(backend, "contended", limit=3)
    inside, peak, granted = [0], [0], [0]
    lock = threading.Lock()
    barrier = threading.Barrier(12)

    def call():
        barrier.wait()
        for _ in range(5):
            with limiter.acquire(raise_on_failure=False) as ok:
                if not ok:
                    continue
                with lock:
                    inside[0] += 1
                    granted[0] += 1
                    peak[0] = max(peak[0], inside[0])
                with lock:
                    inside[0] -= 1

    threads = [threading.Thread(target=call) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert granted[0] > 0 and peak[0] <= 3
    assert backend.incr("contended", 0, 0, 1000)  # every slot was given back


def test_window_limiter_allows_its_limit_per_window(broker):
    limiter = WindowRateLimiter(PostgresRateLimiterBackend(broker), "requests:1", limit=3, window=60)

    results = []
    for _ in range(5):
        with limiter.acquire(raise_on_failure=False) as ok:
            results.append(ok)

    assert results == [True, True, True, False, False]


def test_expired_counters_count_as_absent(broker, conn):
    backend = PostgresRateLimiterBackend(broker)
    assert backend.add("k", 5, ttl=60_000)
    assert not backend.add("k", 1, ttl=60_000)
    assert not backend.incr("k", 1, maximum=5, ttl=60_000)
    query(conn, "UPDATE rate_limit_counters SET expires_at = now() - interval '1 second'")

    assert backend.incr("k", 2, maximum=5, ttl=60_000)
    assert query(conn, "SELECT value FROM rate_limit_counters WHERE key = 'k'") == [(2,)]
    assert backend.decr("k", 2, minimum=0, ttl=60_000)
    assert not backend.decr("k", 1, minimum=0, ttl=60_000)


HITS = [Hit(passage_id=1, source_id="7", page=2, text="Green roofs lowered roof temperatures.", score=1.0)]


def test_provider_calls_count_against_the_daily_budget(broker, conn):
    with FakeChatServer() as server:
        judge = OpenAIJudge(base_url=server.base_url, model="m")
        with broker.connection() as c, c.cursor() as cur:
            budget.set_limit(cur, "openai", 1)

        first = pipeline._judge_guarded(judge, "roofs were cooler", HITS, broker, PipelineSettings())
        with pytest.raises(pipeline.ProviderBusy, match="budget"):
            pipeline._judge_guarded(judge, "roofs were cooler", HITS, broker, PipelineSettings())

    assert first.verdict is Verdict.supported and first.evidence_page == 2
    assert server.request_count == 1
    assert query(conn, "SELECT calls_used FROM provider_daily_budget WHERE provider = 'openai'") == [(1,)]


def test_a_rate_limited_provider_becomes_a_retry(broker):
    with FakeChatServer() as server:
        server.mode = "rate_limited"
        judge = OpenAIJudge(base_url=server.base_url, model="m")
        with pytest.raises(pipeline.ProviderBusy, match="429"):
            pipeline._judge_guarded(judge, "roofs were cooler", HITS, broker, PipelineSettings())


def test_a_provider_slot_held_elsewhere_makes_the_judge_wait_then_give_up(broker):
    settings = PipelineSettings(judge_concurrency=1, judge_slot_wait_seconds=0)
    elsewhere = budget.ProviderSlots(broker, "openai", 1)
    with FakeChatServer() as server:
        judge = OpenAIJudge(base_url=server.base_url, model="m")
        with elsewhere.hold(wait_seconds=0):
            with pytest.raises(budget.SlotsTaken, match="slots"):
                pipeline._judge_guarded(judge, "roofs were cooler", HITS, broker, settings)
        assert server.request_count == 0
        assert wait_for(lambda: pipeline._judge_guarded(judge, "roofs were cooler", HITS, broker, settings))
