"""GroupCommit: many threads' writes in few batches, each thread gets its own result."""

from __future__ import annotations

import threading
import time

import pytest

from broker.batching import GroupCommit


def test_a_lone_item_is_written_at_once_alone():
    batches = []
    commit = GroupCommit(lambda items: batches.append(list(items)) or [i * 2 for i in items])

    assert commit.submit(21) == 42
    assert batches == [[21]]


def test_items_arriving_during_a_write_go_together_in_the_next_one():
    first_write_started, release_first_write = threading.Event(), threading.Event()
    batches = []

    def write(items):
        batches.append(list(items))
        if len(batches) == 1:
            first_write_started.set()
            release_first_write.wait(timeout=10)
        return [f"done {i}" for i in items]

    commit = GroupCommit(write)
    results = {}

    def submit(i):
        results[i] = commit.submit(i)

    leader = threading.Thread(target=submit, args=(0,))
    leader.start()
    assert first_write_started.wait(timeout=10)
    followers = [threading.Thread(target=submit, args=(i,)) for i in range(1, 9)]
    for t in followers:
        t.start()
    # All eight are queued behind the write in flight before it is let go.
    deadline = time.monotonic() + 10
    while len(commit._waiting) < 8:
        assert time.monotonic() < deadline, "followers did not queue up"
        time.sleep(0.001)
    release_first_write.set()
    for t in [leader, *followers]:
        t.join(timeout=10)

    assert batches[0] == [0]
    assert sorted(batches[1]) == list(range(1, 9)) and len(batches) == 2
    assert results == {i: f"done {i}" for i in range(9)}


def test_a_failed_write_raises_in_every_thread_of_its_batch_and_the_next_batch_still_runs():
    calls = []

    def write(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise RuntimeError("database went away")
        return list(items)

    commit = GroupCommit(write)
    with pytest.raises(RuntimeError, match="database went away"):
        commit.submit(1)
    assert commit.submit(2) == 2


def test_many_threads_each_get_their_own_result_and_nothing_is_written_twice():
    written = []
    lock = threading.Lock()

    def write(items):
        with lock:
            written.extend(items)
        return [-i for i in items]

    commit = GroupCommit(write, max_batch=4)
    results = {}

    def worker(base):
        for i in range(base, base + 200):
            results[i] = commit.submit(i)

    threads = [threading.Thread(target=worker, args=(n * 1000,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    assert sorted(written) == sorted(results) and len(written) == 1600
    assert all(results[i] == -i for i in results)


def test_a_write_returning_the_wrong_number_of_results_is_an_error():
    commit = GroupCommit(lambda items: [])
    with pytest.raises(RuntimeError, match="0 results for 1 items"):
        commit.submit("x")


def test_a_lingering_writer_waits_for_as_many_as_last_time_and_no_longer():
    batches = []
    commit = GroupCommit(lambda items: batches.append(sorted(items)) or list(items), linger=60.0)

    # Quiet: nothing bigger than one was written recently, so a lone item does not linger.
    assert commit.submit(0) == 0

    def wave(items):
        threads = [threading.Thread(target=commit.submit, args=(i,)) for i in items]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads)

    first_gate, go = threading.Event(), threading.Event()
    original = commit._write

    def held_write(items):
        if not first_gate.is_set():
            first_gate.set()
            go.wait(timeout=10)
        return original(items)

    commit._write = held_write
    leader = threading.Thread(target=commit.submit, args=(1,))
    leader.start()
    assert first_gate.wait(timeout=10)
    followers = [threading.Thread(target=commit.submit, args=(i,)) for i in (2, 3, 4, 5)]
    for t in followers:
        t.start()
    deadline = time.monotonic() + 10
    while len(commit._waiting) < 4:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    go.set()
    for t in [leader, *followers]:
        t.join(timeout=30)
    assert batches[-1] == [2, 3, 4, 5]

    # A batch of four was written: the next writer waits for three more to arrive (the
    # sixty seconds of linger would fail the test's timeout), and all four go together.
    wave([6, 7, 8, 9])
    assert batches[-1] == [6, 7, 8, 9]
