"""The Procfile's worker and scheduler as real processes: they run on the database every
citeq command uses (DATABASE_URL here; the embedded server when it is unset, through the
same ``citeq`` lookup the CLI and ``citeq web`` use) and name it in their first log line."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import query, wait_for

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def procfile() -> dict[str, list[str]]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return {name.strip(): shlex.split(cmd) for name, cmd in (line.split(":", 1) for line in lines if line.strip())}


@pytest.mark.parametrize("role", ["worker", "scheduler"])
def test_the_procfile_process_names_its_database_first_and_runs(role, db, conn, tmp_path):
    argv = procfile()[role]
    assert argv[:2] == ["citeq", role]
    if role == "worker":
        argv = [*argv[:2], "--processes", "1", "--threads", "1"]
    log = tmp_path / f"{role}.log"
    env = dict(os.environ, DATABASE_URL=db, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(BIN / argv[0]), *argv[1:]], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: log.read_text().strip(), timeout=60, message="first log line")
        first = log.read_text().splitlines()[0]
        assert first.startswith(f"citeq {role}: using database ") and "from DATABASE_URL" in first
        assert db.split("/")[-1].split("?")[0] in first
        if role == "worker":
            wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_workers")[0][0] > 0, timeout=60,
                     message="the worker heartbeats on that database")
        else:
            wait_for(lambda: "Registered periodic actors" in log.read_text(), timeout=60,
                     message="periodiq registered the sweepers")
        assert proc.poll() is None  # still running, not stopped for want of DATABASE_URL
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
