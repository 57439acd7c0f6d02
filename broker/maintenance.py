"""The two background threads of a consuming process.

* :class:`Listener` holds one connection in ``LISTEN citeq_wakeup`` and wakes the
  consumer of the queue named in a notification, at once or, for a delayed message
  (payload ``<queue> <seconds>``), when it is due. It is only the fast path: a lost
  notification (or a lost connection) costs at most one poll interval. Its connection
  goes to ``CITEQ_LISTEN_URL`` when set (behind a transaction pooler, a direct one); a
  process with nowhere to listen has no listener and its consumers poll.
* :class:`LeaseKeeper` renews this process's leases (those its consumers know they
  claimed, by lease token, not every row under its name) and its row in ``citeq_workers``
  (every ``heartbeat_interval``), re-queues expired leases of dead workers (or
  dead-letters them after ``max_deliveries``), sweeps for stalled message groups, and
  prunes finished messages and expired results. (It was called ``Heartbeat``, which said only the first of these.)
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time

import psycopg2

from . import backoff
from .pool import BROKEN

logger = logging.getLogger(__name__)

#: How often each consuming process sweeps for stalled message groups (broker/groups.py).
GROUP_SWEEP_SECONDS = 5.0

#: The LISTEN channel, a constant identifier (the only SQL text not in queries.sql).
CHANNEL = "citeq_wakeup"


class Listener(threading.Thread):
    def __init__(self, broker) -> None:
        super().__init__(name="citeq-listener", daemon=True)
        self.broker = broker
        self.stopping = threading.Event()
        #: Whether the LISTEN connection is open (counted in the process's connections).
        self.connected = False

    def run(self) -> None:
        failures = 0
        while not self.stopping.is_set():
            try:
                self._listen()
                failures = 0
            except BROKEN as exc:
                logger.warning("listener lost its connection; consumers fall back to polling: %s", exc)
                self.stopping.wait(backoff.delay(failures, first=0.1, cap=5.0, jitter=False))
                failures += 1

    def _listen(self) -> None:
        conn = psycopg2.connect(self.broker.connector.listen_url, application_name=self.broker.application_name)
        self.connected = True
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(f"LISTEN {CHANNEL}")
            # Notifications may have been missed while we were not listening.
            self.broker.wake_all()
            while not self.stopping.is_set():
                if select.select([conn], [], [], 1.0)[0]:
                    conn.poll()
                    payloads = {n.payload for n in conn.notifies}
                    conn.notifies.clear()
                    for payload in payloads:
                        self.dispatch(payload)
        finally:
            self.connected = False
            conn.close()

    def dispatch(self, payload: str) -> None:
        """``<queue>``: due messages, wake its consumer; ``<queue> <seconds>``: delayed ones."""
        queue, _, delay = payload.partition(" ")
        if not delay:
            self.broker.wake(queue)
            return
        try:
            seconds = float(delay)
        except ValueError:
            self.broker.wake(queue)
            return
        self.broker.wake_in(queue, seconds)

    def stop(self) -> None:
        self.stopping.set()


class LeaseKeeper(threading.Thread):
    """Keeps this process's leases and worker row alive, and reaps and prunes for everyone."""

    def __init__(self, broker) -> None:
        super().__init__(name="citeq-lease-keeper", daemon=True)
        self.broker = broker
        self.stopping = threading.Event()
        self.hostname = socket.gethostname()

    def run(self) -> None:
        settings = self.broker.settings
        next_prune = next_sweep = 0.0
        while not self.stopping.is_set():
            try:
                self.renew()
                self.broker.reap()
                if time.monotonic() >= next_sweep:
                    self.broker.group_sweeper.run_once()
                    next_sweep = time.monotonic() + GROUP_SWEEP_SECONDS
                if time.monotonic() >= next_prune:
                    self.broker.prune()
                    next_prune = time.monotonic() + 30
            except Exception as exc:  # noqa: BLE001 - keep beating through a database blip
                logger.warning("lease renewal failed, retrying: %s", exc)
            self.stopping.wait(settings.heartbeat_interval)

    def renew(self) -> None:
        """Record this process as alive (or gone, once it serves no queue) and give every
        message it holds a fresh lease."""
        queues = self.broker.consumed_queues
        self.broker.pool.close_idle()
        # The heartbeat writes on a pooled connection: when closing the idle ones left the
        # pool empty, it opens one, and the row counts it (an open process never holds none).
        connections = self.broker.connections + (self.broker.connector.open_connections == 0)
        self.broker.store.heartbeat(self.broker.worker_id, hostname=self.hostname, pid=self.broker.pid,
                                    queues=queues, connections=connections,
                                    threads=self.broker.worker_threads, held=self.broker.held_leases())

    def stop(self) -> None:
        self.stopping.set()
