"""The one backoff of citeq's retry loops: doubling from the first wait, capped, jittered."""

from __future__ import annotations

from broker import backoff


def test_without_jitter_it_doubles_from_the_first_wait_up_to_the_cap():
    assert [backoff.delay(n, first=0.1, cap=5.0, jitter=False) for n in range(8)] == [
        0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_with_jitter_it_stays_between_the_wait_and_twice_it_and_within_the_cap():
    for attempt in range(12):
        plain = min(0.05 * 2**attempt, 1.0)
        for _ in range(50):
            waited = backoff.delay(attempt, first=0.05, cap=1.0)
            assert 0.05 <= waited <= 1.0
            assert (plain <= waited <= 2 * plain) or 0.5 <= waited
