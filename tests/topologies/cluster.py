"""What the partition and failover tests share: a database of their own on a server of their
own, the test process's broker pointed at it, and real `dramatiq` / `periodiq` processes
(optionally inside a network namespace) running the real pipeline."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dramatiq
import psutil
import psycopg2

from tests.e2e import hooks
from tests.faults import harness

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def connect(url: str):
    conn = psycopg2.connect(url)
    conn.autocommit = True
    return conn


def prepare_database(url: str) -> None:
    """Migrated, with the e2e hooks' tables and the verdict log of the fault suite."""
    from broker.migrate import migrate

    migrate(url)
    conn = connect(url)
    try:
        hooks.install(conn)
        harness.install_verdict_log(conn)
    finally:
        conn.close()


@contextmanager
def actors_on(url: str) -> Iterator[None]:
    """The test process's own sends (admissions, uploads) go to ``url`` for the duration:
    the actors' broker is module-level and was made for the session's database."""
    saved_env = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = url
    import actors

    connector = actors.broker.connector
    saved_url = connector.settings.database_url
    connector.close()
    connector._pool = None
    connector.settings.database_url = url
    dramatiq.set_broker(actors.broker)
    try:
        yield
    finally:
        connector.close()
        connector._pool = None
        connector.settings.database_url = saved_url
        if saved_env is None:
            os.environ.pop("DATABASE_URL", None)
        else:
            os.environ["DATABASE_URL"] = saved_env


class Fleet:
    """Worker and scheduler processes, each in its own process group, logs in ``tmp_path``."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.tmp_path = tmp_path
        self.env = dict(os.environ, CITEQ_POLL_INTERVAL="0.2", CITEQ_RELEASE_CHECK=hooks.RELEASE_CHECK,
                        CITEQ_RESEND_GRACE_SECONDS="5", PYTHONUNBUFFERED="1", **env)
        self.env.pop("CITEQ_ANALYZE_WORK", None)  # the real pipeline
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def _start(self, argv: list[str], env: dict[str, str], prefix: list[str]) -> subprocess.Popen:
        log = self.tmp_path / f"{Path(argv[0]).name}-{len(self.started)}.log"
        proc = subprocess.Popen([*prefix, *argv], cwd=ROOT, env={**self.env, **env}, stdout=log.open("w"),
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((proc, log))
        return proc

    def worker(self, env: dict[str, str], prefix: list[str] | None = None) -> subprocess.Popen:
        return self._start([str(BIN / "dramatiq"), "actors", "tests.e2e.hooks", "--processes", "1",
                            "--threads", "4", "--path", "."], env, prefix or [])

    def scheduler(self, env: dict[str, str]) -> subprocess.Popen:
        return self._start([str(BIN / "periodiq"), "actors", "--path", "."], env, [])

    def log(self, proc: subprocess.Popen) -> str:
        return next(log for p, log in self.started if p is proc).read_text(errors="replace")

    @staticmethod
    def pids(proc: subprocess.Popen) -> set[int]:
        """The process and its children (the worker processes a dramatiq master forked)."""
        try:
            return {proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))}
        except psutil.NoSuchProcess:
            return {proc.pid}

    def stop_all(self) -> None:
        for proc, _ in self.started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc, _ in self.started:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def worker_pid(worker_id: str | None) -> int | None:
    """The pid in a broker worker id (``host:nonce:pid``)."""
    return int(worker_id.rsplit(":", 1)[1]) if worker_id else None
