"""WorkerThreads: how many worker threads this process runs, for its heartbeat.

A Dramatiq broker never sees the ``Worker`` that consumes from it, only the middleware
hooks around it; this middleware counts the threads of every worker that boots (and stops)
in the process, and the lease keeper writes the count into ``citeq_workers.threads``, where
the operator view weighs the messages a process holds against its threads.
"""

from __future__ import annotations

import threading

from dramatiq import Middleware


class WorkerThreads(Middleware):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads = 0
        self._booted = False

    @property
    def threads(self) -> int | None:
        """Worker threads of the workers running in this process; None before any booted."""
        with self._lock:
            return self._threads if self._booted else None

    def before_worker_boot(self, broker, worker) -> None:
        with self._lock:
            self._threads += worker.worker_threads
            self._booted = True

    def after_worker_shutdown(self, broker, worker) -> None:
        with self._lock:
            self._threads = max(0, self._threads - worker.worker_threads)
