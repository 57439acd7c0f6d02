"""Group commit: many threads' small writes go to the database as one statement.

A worker process runs many threads; each finishes its message with a small write (mark
the job running, complete it). One statement per write makes the database's per-statement
cost (parse, plan, round trip, commit) the ceiling of the whole process. A
:class:`GroupCommit` lets the first thread that arrives write at once, alone; threads
that arrive while that write is in flight wait and go together in the next one. Idle, a
write costs what it did; busy, one statement carries as many writes as there are threads.
Nothing waits for a batch to fill.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Slot(Generic[T, R]):
    __slots__ = ("item", "done", "result", "error", "wake")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None
        # Held until this slot's thread may go on: its batch is written, or it leads the next.
        self.wake = threading.Lock()
        self.wake.acquire()


class GroupCommit(Generic[T, R]):
    """Run ``write(items) -> results`` (one result per item, in order) for items submitted
    by many threads, one batch at a time.

    A batch that raises raises in every thread whose item was in it; each caller decides
    whether to submit again. ``write`` must therefore treat every item on its own merits
    (guarded updates), so that a retried batch is harmless.
    """

    def __init__(self, write: Callable[[Sequence[T]], Sequence[R]], *, max_batch: int = 256,
                 linger: float = 0.0) -> None:
        self._write = write
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._waiting: list[_Slot[T, R]] = []
        self._writing = False
        # Lingering: a writer whose batch is smaller than the recent ones waits up to
        # ``linger`` seconds for the rest to arrive. Threads that run short jobs in step
        # then share one statement; where batches are of one (a quiet process, long jobs)
        # the expectation decays to one and nobody waits.
        self._linger = linger
        self._expected = 1
        self._lingering = False

    def submit(self, item: T) -> R:
        """Write ``item`` (with whatever else is waiting); its result once written."""
        mine: _Slot[T, R] = _Slot(item)
        with self._lock:
            self._waiting.append(mine)
            lead = not self._writing
            self._writing = True
            if self._lingering and len(self._waiting) >= self._expected:
                self._arrived.notify()
        if not lead:
            mine.wake.acquire()  # woken by the writer of its batch, or to write the next one
            if mine.done:
                return self._outcome(mine)
        self._lead()
        return self._outcome(mine)

    def _lead(self) -> None:
        """Write the oldest waiting items (this thread's among them), then hand over."""
        with self._lock:
            if self._linger and len(self._waiting) < self._expected:
                self._lingering = True
                self._arrived.wait_for(lambda: len(self._waiting) >= self._expected, self._linger)
                self._lingering = False
            batch, self._waiting = self._waiting[: self._max_batch], self._waiting[self._max_batch:]
            self._expected = max(len(batch), self._expected - 1)
        try:
            results = self._write([slot.item for slot in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"batch write returned {len(results)} results for {len(batch)} items")
            for slot, result in zip(batch, results):
                slot.result = result
        except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
            for slot in batch:
                slot.error = exc
        finally:
            with self._lock:
                for slot in batch:
                    slot.done = True
                successor = self._waiting[0] if self._waiting else None
                self._writing = successor is not None
            for slot in batch:
                if slot.wake.locked():
                    slot.wake.release()
            if successor is not None:
                successor.wake.release()  # not done: it writes the next batch

    @staticmethod
    def _outcome(slot: _Slot[T, R]) -> R:
        if slot.error is not None:
            raise slot.error
        return slot.result  # type: ignore[return-value]
