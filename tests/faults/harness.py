"""What every fault case shares: a slow loopback provider, a batch of several users'
analyses, a TCP proxy that cuts database connections, the after-checks and the tally.

Sizes: the CI size by default; ``CITEQ_FAULTS_LONG=1`` (``scripts/fault_suite.py --long``)
makes the batch bigger and the faults longer (the provider down for a minute, the
scheduler away for ten).
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import quote

import psycopg2.extensions

from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline.intake import uploads
from analysis.queue import userqueue
from tests.conftest import query, wait_for
from tests.fakes.openai_server import FakeChatServer, default_rule
from tests.integration.conftest import documents_by_name, open_account, parse_done, sample_files

LONG = os.environ.get("CITEQ_FAULTS_LONG") == "1"
#: Users in a batch, analyses per user, seconds a provider call takes.
USERS, JOBS_PER_USER, CALL_SECONDS = (6, 3, 1.5) if LONG else (3, 2, 0.7)
#: How long the provider answers 500, and how long the scheduler is away (CI: see the case).
PROVIDER_DOWN_SECONDS = 60.0 if LONG else 6.0
SCHEDULER_AWAY_SECONDS = 600.0 if LONG else 0.0
#: Deadline for a batch to end after its fault: generous, not a timing assertion.
BATCH_DEADLINE = 900.0 if LONG else 240.0

VERDICT_LOG = """
CREATE TABLE IF NOT EXISTS test_verdict_writes (job_id bigint NOT NULL, ordinal integer NOT NULL,
                                                had_verdict boolean NOT NULL);
CREATE OR REPLACE FUNCTION test_log_verdict() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO test_verdict_writes VALUES (NEW.job_id, NEW.ordinal, OLD.verdict IS NOT NULL);
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS test_log_verdict ON job_citations;
CREATE TRIGGER test_log_verdict AFTER UPDATE OF verdict ON job_citations
    FOR EACH ROW WHEN (NEW.verdict IS NOT NULL) EXECUTE FUNCTION test_log_verdict();
"""


@dataclass
class Tally:
    faults: int = 0
    jobs: int = 0
    lost: int = 0
    charged_twice: int = 0
    verdicts_duplicated: int = 0
    cases: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"fault suite ({'long' if LONG else 'CI'} size, cases: {', '.join(self.cases) or 'none'}): "
                f"faults injected {self.faults}, jobs {self.jobs}, lost {self.lost}, "
                f"charged twice {self.charged_twice}, verdicts duplicated {self.verdicts_duplicated}")


TALLY = Tally()


class SlowProvider(FakeChatServer):
    """The loopback fake provider, answering after ``CALL_SECONDS``; ``down()`` makes it
    answer 500 until ``up()``; ``hold()`` keeps the answers it owes until ``release()``."""

    def __init__(self, seconds: float = CALL_SECONDS, *, host: str = "127.0.0.1") -> None:
        self._answering = threading.Event()
        self._answering.set()
        self._open = 0
        self._open_lock = threading.Lock()

        def slow(body):
            with self._open_lock:
                self._open += 1
            try:
                time.sleep(seconds * random.uniform(0.8, 1.2))
                self._answering.wait(timeout=120)
                return default_rule(body)
            finally:
                with self._open_lock:
                    self._open -= 1

        super().__init__(rule=slow, host=host)

    @property
    def calls_open(self) -> int:
        """Calls received and not yet answered."""
        with self._open_lock:
            return self._open

    def hold(self) -> None:
        """Answer no call until :meth:`release`: a caller waiting now cannot finish its message."""
        self._answering.clear()

    def release(self) -> None:
        self._answering.set()

    def stop(self) -> None:
        self.release()
        super().stop()

    def down(self) -> None:
        self.mode = "server_error"

    def up(self) -> None:
        self.mode = "answer"

    def env(self) -> dict[str, str]:
        return {"CITEQ_JUDGE": "openai", "CITEQ_JUDGE_BASE_URL": self.base_url, "CITEQ_JUDGE_MODEL": "fake",
                "CITEQ_JUDGE_TIMEOUT": "10", "CITEQ_JUDGE_CONCURRENCY": "4"}


def install_verdict_log(conn) -> None:
    with conn.cursor() as cur:
        cur.execute(VERDICT_LOG)


def remove_verdict_log(conn) -> None:
    with conn.cursor() as cur:
        cur.execute("DROP TRIGGER IF EXISTS test_log_verdict ON job_citations")


def submit_batch(conn) -> list[int]:
    """USERS users, each with a parsed thesis and two sources and JOBS_PER_USER analyses
    admitted back to back (one running per user, the rest queued): the job ids."""
    staged = {}
    for user in range(1, USERS + 1):
        open_account(conn, user, credits=JOBS_PER_USER + 2)
        staged[user] = uploads.stage_upload(user, [
            *sample_files("thesis_urban_heat.pdf", kind="thesis"),
            *sample_files("castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")], settings=PipelineSettings())
    jobs = []
    for user, upload in staged.items():
        assert wait_for(lambda: parse_done(conn, upload.parse_job_id), timeout=120,
                        message=f"user {user}'s upload parsed") == "succeeded"
        docs = documents_by_name(conn, upload.session_id)
        sources = [docs["castillo_2018_green_roofs.pdf"], docs["nakamura_heat_notes.txt"]]
        jobs += [userqueue.admit(user, docs["thesis_urban_heat.pdf"], sources, settings=QueueSettings()).job_id
                 for _ in range(JOBS_PER_USER)]
    return jobs


def judge_calls_in_flight(conn) -> bool:
    """Some verdicts written and some still to come: faults now land mid-job."""
    judged, open_ = query(conn, "SELECT count(*) FILTER (WHERE verdict IS NOT NULL), "
                                "count(*) FILTER (WHERE verdict IS NULL) FROM job_citations")[0]
    return judged > 0 and open_ > 0


def all_started(conn, jobs: list[int]) -> bool:
    """Every job has been started at least once (none queued or pending any more)."""
    return query(conn, "SELECT count(*) FROM analysis_jobs WHERE id = ANY(%s) "
                       "AND status IN ('queued', 'pending')", jobs)[0][0] == 0


def terminal(conn, jobs: list[int]) -> bool:
    return query(conn, "SELECT count(*) FROM analysis_jobs WHERE id = ANY(%s) "
                       "AND status IN ('succeeded', 'failed', 'canceled')", jobs)[0][0] == len(jobs)


def check_and_tally(conn, case: str, jobs: list[int], faults: int) -> None:
    """After a fault: every admitted job ended, charged once (refunded once if failed), no
    verdict written twice, nothing lost. Counts go to the tally before the asserts."""
    try:
        ended = wait_for(lambda: terminal(conn, jobs), timeout=BATCH_DEADLINE, interval=0.2,
                         message=f"{case}: every job ended")
    except AssertionError:
        ended = False  # counted as lost below, then failed
    rows = query(conn, """
        SELECT j.id, j.status::text, j.failure_reason,
               count(*) FILTER (WHERE l.kind = 'charge'), count(*) FILTER (WHERE l.kind = 'refund'),
               (SELECT count(*) FROM job_citations c WHERE c.job_id = j.id AND c.verdict IS NULL)
        FROM analysis_jobs j LEFT JOIN credit_ledger l ON l.job_id = j.id
        WHERE j.id = ANY(%s) GROUP BY j.id ORDER BY j.id""", jobs)
    lost = sum(1 for _, status, _, _, _, unjudged in rows if status == "succeeded" and unjudged)
    lost += len(jobs) - sum(1 for r in rows if r[1] in ("succeeded", "failed", "canceled"))
    charged_twice = sum(1 for r in rows if r[3] > 1 or r[4] > 1)
    duplicated = query(conn, "SELECT count(*) FROM (SELECT 1 FROM test_verdict_writes GROUP BY job_id, ordinal "
                             "HAVING count(*) > 1) d")[0][0]
    TALLY.faults += faults
    TALLY.jobs += len(jobs)
    TALLY.lost += lost
    TALLY.charged_twice += charged_twice
    TALLY.verdicts_duplicated += duplicated
    TALLY.cases.append(case)
    assert ended and lost == 0, f"{case}: jobs (id, status, reason, charges, refunds, unjudged) {rows}; " \
        f"messages not done {_messages_not_done(conn)}"
    assert charged_twice == 0 and all(r[3] == 1 for r in rows), "each job charged exactly once"
    for job_id, status, reason, _, refunds, _ in rows:
        if status == "failed":
            assert reason and refunds == 1, f"job {job_id} failed ({reason}) and is refunded"
        else:
            assert refunds == 0
    assert duplicated == 0
    assert query(conn, "SELECT count(*) FROM test_verdict_writes WHERE had_verdict")[0][0] == 0


class CuttingProxy:
    """A TCP proxy from 127.0.0.1 to the database (its Unix socket, or its host and port for
    a server of DATABASE_URL on TCP) that cuts every connection after a random lifetime
    while ``cutting`` is set — mid-transaction as often as not."""

    def __init__(self, db_url: str, *, min_life: float = 0.3, max_life: float = 4.0) -> None:
        dsn = psycopg2.extensions.parse_dsn(db_url)
        host, port = dsn.get("host") or "/tmp", int(dsn.get("port") or 5432)
        if host.startswith("/"):
            self.upstream = (socket.AF_UNIX, os.path.join(host, f".s.PGSQL.{port}"))
        else:
            self.upstream = (socket.AF_INET6 if ":" in host else socket.AF_INET, (host, port))
        self.dsn = dsn
        self.min_life, self.max_life = min_life, max_life
        self.cutting = threading.Event()
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._pairs: list[tuple[socket.socket, socket.socket, float]] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        port = self._listener.getsockname()[1]
        user = self.dsn.get("user", "postgres")
        password = f":{quote(self.dsn['password'], safe='')}" if self.dsn.get("password") else ""
        return f"postgresql://{quote(user, safe='')}{password}@127.0.0.1:{port}/{self.dsn['dbname']}?sslmode=disable"

    def __enter__(self) -> CuttingProxy:
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()
        threading.Thread(target=self._cutter, daemon=True, name="proxy-cutter").start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._listener.close()
        with self._lock:
            for a, b, _ in self._pairs:
                _close(a, b)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            family, address = self.upstream
            upstream = socket.socket(family, socket.SOCK_STREAM)
            try:
                upstream.connect(address)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream, time.monotonic() + random.uniform(self.min_life, self.max_life)))
            self._start_pumps(client, upstream)

    def _start_pumps(self, client: socket.socket, upstream: socket.socket) -> None:
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(src, dst), daemon=True).start()

    def _cutter(self) -> None:
        while not self._stop.wait(0.1):
            if not self.cutting.is_set():
                continue
            now = time.monotonic()
            with self._lock:
                due = [p for p in self._pairs if p[2] <= now]
                self._pairs = [p for p in self._pairs if p[2] > now]
            for a, b, _ in due:
                _close(a, b)
                self.cuts += 1


class AnswerDroppingProxy(CuttingProxy):
    """A proxy that, while ``cutting`` is set, forwards a statement naming one of
    ``statements`` (with probability ``p``), drops the server's answer and cuts the
    connection: the statement runs and commits, and the client sees the connection break
    without knowing that (a cut that lands between COMMIT and its answer). Connections are
    not cut otherwise."""

    def __init__(self, db_url: str, statements: list[bytes], *, p: float = 0.3) -> None:
        super().__init__(db_url, min_life=float("inf"), max_life=float("inf"))
        self.statements, self.p = statements, p
        self.dropped: dict[bytes, int] = {}

    def _start_pumps(self, client: socket.socket, upstream: socket.socket) -> None:
        mute = threading.Event()
        threading.Thread(target=self._forward_statements, args=(client, upstream, mute), daemon=True).start()
        threading.Thread(target=_pump, args=(upstream, client, mute), daemon=True).start()

    def _forward_statements(self, client: socket.socket, upstream: socket.socket, mute: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                hit = self.cutting.is_set() and next((s for s in self.statements if s in data), None)
                if hit and random.random() < self.p:
                    mute.set()  # the answer is not forwarded
                upstream.sendall(data)
                if mute.is_set():
                    with self._lock:
                        self.dropped[hit] = self.dropped.get(hit, 0) + 1
                        self.cuts += 1
                    time.sleep(0.05)  # the server reads and runs it before its client goes away
                    return
        except OSError:
            pass
        finally:
            _close(client, upstream)


def _pump(src: socket.socket, dst: socket.socket, mute: threading.Event | None = None) -> None:
    try:
        while data := src.recv(65536):
            if mute is None or not mute.is_set():
                dst.sendall(data)
    except OSError:
        pass
    finally:
        _close(src, dst)


def _close(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def _messages_not_done(conn) -> list[tuple]:
    """What the broker still holds when a batch did not end: the first clue to where it stuck."""
    return query(conn, "SELECT queue_name, actor_name, state::text, attempts, left(coalesce(dead_reason, ''), 120) "
                       "FROM citeq_messages WHERE state <> 'done' ORDER BY id LIMIT 20")
