"""Real processes for the end-to-end tests: `dramatiq actors` workers and `periodiq actors`
schedulers, started on the test database with a short lease and the test hooks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import dramatiq
import pytest

from tests.e2e import hooks

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class Processes:
    def __init__(self, db: str, tmp_path: Path) -> None:
        self.env = dict(os.environ, DATABASE_URL=db, CITEQ_LEASE_SECONDS="2", CITEQ_POLL_INTERVAL="0.2",
                        CITEQ_ANALYZE_WORK=hooks.WORK, CITEQ_RELEASE_CHECK=hooks.RELEASE_CHECK,
                        PYTHONUNBUFFERED="1")
        self.tmp_path = tmp_path
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        log = self.tmp_path / f"{name}-{len(self.started)}.log"
        proc = subprocess.Popen([str(BIN / name), *args], cwd=ROOT, env=self.env, stdout=log.open("w"),
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append((proc, log))
        return proc

    def worker(self) -> subprocess.Popen:
        # tests.e2e.hooks registers the test's work, release check and judge in the worker.
        return self._start("dramatiq", "actors", "tests.e2e.hooks", "--processes", "1", "--threads", "4",
                           "--path", ".")

    def scheduler(self) -> subprocess.Popen:
        return self._start("periodiq", "actors", "--path", ".")

    def log(self, proc: subprocess.Popen) -> str:
        return next(log for p, log in self.started if p is proc).read_text()

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


@pytest.fixture
def processes(db, conn, tmp_path, monkeypatch):
    """Start real worker and scheduler processes; all are stopped after the test."""
    monkeypatch.setenv("DATABASE_URL", db)
    import actors  # admissions in the test process send on the actors' broker

    dramatiq.set_broker(actors.broker)
    hooks.install(conn)
    procs = Processes(db, tmp_path)
    yield procs
    procs.stop_all()
