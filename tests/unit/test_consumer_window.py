"""How many messages a consumer holds: Dramatiq's prefetch, more only for a backlog of short messages."""

from __future__ import annotations

from types import SimpleNamespace

from broker.consumer import BATCH_SECONDS, PostgresConsumer, QueueState
from broker.groups import KEY_OPTION
from broker.settings import BrokerSettings


def consumer(batch_max: int = 128, prefetch: int = 16, exchange=None, shares=None) -> PostgresConsumer:
    """A consumer on a stand-in broker: ``exchange`` answers its steps, ``shares`` (an iterator)
    its looks at its share of the queue's keys (without: no share)."""
    state = QueueState()
    broker = SimpleNamespace(settings=BrokerSettings(batch_max=batch_max), queue_state=lambda name: state,
                             exchange=exchange, group_share=lambda queue_name, most: next(shares) if shares else None)
    return PostgresConsumer(broker, "default", prefetch, 1000)


def finished(acks, grouped) -> int:
    """What a stand-in exchange reports written: every ack, grouped or not."""
    return len(acks) + (len(grouped[0]) if grouped else 0)


def test_without_a_backlog_the_consumer_holds_its_prefetch():
    c = consumer()
    c.rate = 5_000.0
    assert c.window() == (16, 8)


def test_a_backlog_of_short_messages_is_claimed_and_acked_in_larger_batches():
    c = consumer()
    c.backlog, c.rate = True, 4_000.0  # what 8 threads finish of no-op messages
    hold, low_water = c.window()
    assert hold == int(4_000 * BATCH_SECONDS * 2) and low_water == hold // 2


def test_a_backlog_of_long_messages_stays_within_the_prefetch():
    c = consumer()
    c.backlog, c.rate = True, 8.0  # jobs of a second on 8 threads
    assert c.window() == (16, 8)


def test_the_batch_is_capped_and_can_be_turned_off():
    c = consumer(batch_max=64)
    c.backlog, c.rate = True, 1_000_000.0
    assert c.window()[0] == 64
    off = consumer(batch_max=0)
    off.backlog, off.rate = True, 1_000_000.0
    assert off.window() == (16, 8)


def test_a_step_that_finishes_grouped_messages_has_room_for_their_keys_next():
    """Finishing grouped messages promotes their keys' next ones in the same step; the step
    claims room for as many, even when its window is full (a step due only because its
    acks lingered), so the finishing worker can take them rather than queue them for others."""
    limits = []

    def exchange(queue_name, acks, nacks, limit, grouped=None, heads=None):
        limits.append((limit, len(grouped[0]) if grouped else 0))
        return [], finished(acks, grouped)

    c = consumer(batch_max=0, prefetch=4, exchange=exchange)
    state = c.state
    with state.cond:
        state.outstanding = 7  # 4 held by the window, 3 of them grouped and about to be acked
    for n in range(3):
        state.finish(ack=(n, f"token-{n}"), group_key=f"k{n}")
    with state.cond:
        state.outstanding = 4  # the window is full again (claimed meanwhile)
        state.finished_since -= 1.0  # the acks lingered long enough to be written
    c._step()
    assert limits == [(3, 3)]


def _stepping(claims):
    """A consumer with 8 threads' prefetch whose exchanges claim ``claims`` in turn: lists of
    the group keys of the messages each claim returns (None: a message without a key)."""
    answers = iter(claims)

    def exchange(queue_name, acks, nacks, limit, grouped=None, heads=None):
        claimed = [SimpleNamespace(row_id=n, lease_token=f"t{n}", options={} if key is None else {KEY_OPTION: key})
                   for n, key in enumerate(next(answers))]
        return claimed, finished(acks, grouped)

    c = consumer(prefetch=8, exchange=exchange)
    c.rate = 8_000.0
    return c, c.state


def _finish_all(c, state, keys):
    for n, key in enumerate(keys):
        state.finish(ack=(100 + n, f"a{n}"), group_key=key)
    c.buffer.clear()


def test_a_claim_filled_by_the_keys_next_messages_is_no_backlog():
    """In a drain of many keys each step finishes one message of each key it holds and claims
    the keys' next ones, which it promoted itself: a full claim, with nothing else waiting.
    Taken for a backlog, it grew the window, and the next step claimed at once from an empty
    queue (a round trip per step for nothing)."""
    keys = [f"k{n}" for n in range(40)]
    c, state = _stepping([keys, keys])
    assert c._step() == 40  # the keys' first messages
    _finish_all(c, state, keys)
    assert c._step() == 40  # their next messages, promoted by this step: room was made for them
    assert not c.backlog
    assert c.window() == (8, 4)


def test_a_full_claim_with_other_messages_besides_the_keys_next_is_a_backlog():
    keys = [f"k{n}" for n in range(40)]
    c, state = _stepping([keys, keys[:39] + ["other"]])
    c._step()
    _finish_all(c, state, keys)
    assert c._step() == 40
    assert c.backlog
    assert c.window()[0] > 8


def test_a_step_takes_its_keys_next_messages_only_up_to_the_process_s_share():
    """Beyond its share of the queue's grouped messages in flight, a process leaves the keys'
    next messages queued for the other workers (a key would otherwise stay for good with the
    process that claimed its first message)."""
    limits = []

    def exchange(queue_name, acks, nacks, limit, grouped=None, heads=None):
        limits.append((limit, heads))
        return [], finished(acks, grouped)

    c = consumer(prefetch=8, exchange=exchange, shares=iter([10, None]))
    state = c.state
    for share_seconds_later in (False, True):
        with state.cond:
            state.outstanding = 42
        for n in range(40):
            state.finish(ack=(n, f"token-{n}"), group_key=f"k{n}")
        if share_seconds_later:
            c._share_due = 0.0  # the next look at the share is due
        c._step()
    # Two messages still held: room for 8 of the keys' next ones (the window's own room is
    # 6), and at most 8 of them; with no share known, room for all 40.
    assert limits == [(8, 8), (40, None)]
