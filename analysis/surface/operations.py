"""The operator's overview in one read: every queue with its depth, history and health,
the live workers with the messages they hold, the analyses in flight and the dead letters.

What an operator must see at once is computed here, not in the browser: a queue is
*stalled* when work is ready, it is not paused and no live worker consumes it (the
dashboard's red banner). Dead letters carry the last line of their exception and a
traceback without server paths (file names relative to the project or site-packages).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pydantic import BaseModel

from analysis import db
from analysis.surface import views
from broker import admin, controls

#: Dramatiq's delay and dead-letter queues are not queues an operator manages.
_INTERNAL_SUFFIXES = (".DQ", ".XQ")
#: The window of the processed / failed counts.
HISTORY_SECONDS = 3600


class QueueView(admin.QueueStats):
    processed_last_hour: int = 0
    failed_last_hour: int = 0
    last_failed_at: datetime | None = None
    paused: bool = False
    consumers: int = 0  #: live worker processes serving the queue
    stalled: bool = False  #: work ready, not paused, and no live worker consumes it


class CurrentMessage(BaseModel):
    id: int
    queue_name: str
    actor_name: str
    started_at: datetime | None  #: when the worker claimed it (running since)
    running_seconds: float | None


class WorkerView(BaseModel):
    """A live worker process with its threads and the messages it holds.

    The broker records a message as running when a process claims it, and a process claims
    up to its prefetch, so it may hold more messages than it has threads: ``busy_threads``
    counts at most ``threads``, and the rest of what it holds is ``waiting`` for a thread.
    """

    worker_id: str
    hostname: str
    pid: int
    queues: list[str]
    seconds_since_seen: float
    threads: int | None  #: its worker threads; None: the process did not say
    busy_threads: int  #: threads running a message
    idle_threads: int | None  #: threads free for work; None when ``threads`` is
    waiting: int  #: messages it claimed beyond its threads (prefetched, waiting for a thread)
    busy: bool  #: it holds a message
    current: list[CurrentMessage]  #: the messages it holds, oldest claim first


class DeadLetterView(BaseModel):
    id: int
    queue_name: str
    actor_name: str
    attempts: int
    failed_at: datetime | None
    last_line: str  #: the exception in one line
    traceback: str | None  #: the whole text, server paths removed; None when it is only one line


class Overview(BaseModel):
    queues: list[QueueView]
    workers: list[WorkerView]
    analyses: list[views.JobView]  #: running and pending analyses, oldest first
    dead_letters: list[DeadLetterView]
    generated_at: datetime


def overview(broker, *, known_queues: set[str] = frozenset(), dead_limit: int = 100) -> Overview:
    """Everything the operator view shows; ``known_queues`` are listed even when empty."""
    workers = admin.workers(broker)
    running = controls.running_messages(broker)
    return Overview(queues=queues(broker, known_queues=known_queues, workers=workers),
                    workers=_workers(workers, running),
                    analyses=active_analyses(broker),
                    dead_letters=[dead_letter(d) for d in admin.dead_letters(broker, limit=dead_limit)],
                    generated_at=datetime.now(timezone.utc))


def queues(broker, *, known_queues: set[str] = frozenset(), workers=None) -> list[QueueView]:
    """Every queue (known, with messages, paused, or served by a worker), by name."""
    workers = admin.workers(broker) if workers is None else workers
    stats = {s.queue_name: s for s in admin.queue_stats(broker)}
    history = {h.queue_name: h for h in controls.queue_history(broker, seconds=HISTORY_SECONDS)}
    served: dict[str, int] = {}
    for w in workers:
        for q in set(w.queues):
            served[q] = served.get(q, 0) + 1
    names = {q for q in (set(known_queues) | stats.keys() | history.keys() | served.keys())
             if not q.endswith(_INTERNAL_SUFFIXES)}
    found = []
    for name in sorted(names):
        s = stats.get(name) or admin.QueueStats(queue_name=name, ready=0, delayed=0, running=0, dead=0,
                                                oldest_age_seconds=0.0)
        h = history.get(name)
        view = QueueView(**s.model_dump(), consumers=served.get(name, 0))
        if h is not None:
            view.processed_last_hour, view.failed_last_hour = h.processed, h.failed
            view.last_failed_at, view.paused = h.last_failed_at, h.paused_at is not None
        view.stalled = view.ready > 0 and not view.paused and view.consumers == 0
        found.append(view)
    return found


def _workers(workers: list[admin.WorkerInfo], running: list[controls.RunningMessage]) -> list[WorkerView]:
    held: dict[str, list[CurrentMessage]] = {}
    for m in running:
        held.setdefault(m.worker_id, []).append(CurrentMessage(id=m.id, queue_name=m.queue_name,
                                                               actor_name=m.actor_name, started_at=m.started_at,
                                                               running_seconds=m.running_seconds))
    return [_worker(w, held.get(w.worker_id, [])) for w in workers]


def _worker(w: admin.WorkerInfo, current: list[CurrentMessage]) -> WorkerView:
    busy = len(current) if w.threads is None else min(len(current), w.threads)
    return WorkerView(worker_id=w.worker_id, hostname=w.hostname, pid=w.pid, queues=sorted(set(w.queues)),
                      seconds_since_seen=w.seconds_since_seen, threads=w.threads, busy_threads=busy,
                      idle_threads=None if w.threads is None else w.threads - busy,
                      waiting=len(current) - busy, busy=bool(current), current=current)


def active_analyses(broker, *, limit: int = 100) -> list[views.JobView]:
    """Running analyses, then pending ones (sent, waiting for a worker), oldest first."""
    ids = [r[0] for r in db.many_on(broker, "job_active_ids_many", limit=limit)]
    if not ids:
        return []
    found = {j.id: j for j in views.jobs(broker, ids=ids, limit=limit)}
    return [found[i] for i in ids if i in found]


# -- dead letters -------------------------------------------------------------------------------

#: ``File "/srv/app/.venv/lib/python3.12/site-packages/dramatiq/worker.py"`` → ``dramatiq/worker.py``
_FILE = re.compile(r'File "([^"]+)"')
#: Any other absolute path with two or more parts keeps only its last part.
_ABSOLUTE = re.compile(r"(?<![\w.])/(?:[\w.\-]+/)+([\w.\-]+)")
_ROOTS = ("site-packages/", "dist-packages/")


def _relative(path: str) -> str:
    for root in _ROOTS:
        if root in path:
            return path.rsplit(root, 1)[1]
    for package in ("/analysis/", "/actors/", "/broker/", "/web/", "/citeq/", "/scripts/", "/tests/"):
        if package in path:
            return package[1:] + path.rsplit(package, 1)[1]
    return path.rsplit("/", 1)[-1]


def without_paths(text: str) -> str:
    """The text with server paths removed: file names relative to their package."""
    text = _FILE.sub(lambda m: f'File "{_relative(m.group(1))}"', text)
    return _ABSOLUTE.sub(lambda m: m.group(1), text)


def dead_letter(letter: admin.DeadLetter) -> DeadLetterView:
    """A dead letter as the operator reads it: its exception's last line first."""
    text = without_paths((letter.reason or "no reason recorded").strip())
    lines = [line for line in text.splitlines() if line.strip()]
    return DeadLetterView(id=letter.id, queue_name=letter.queue_name, actor_name=letter.actor_name,
                          attempts=letter.attempts, failed_at=letter.finished_at,
                          last_line=lines[-1].strip() if lines else "no reason recorded",
                          traceback=text if len(lines) > 1 else None)
