"""`citeq web` as the Procfile runs it: a real process answering on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.integration.conftest import wait_for

pytestmark = pytest.mark.e2e


def test_citeq_web_serves_health_openapi_and_metrics(db, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, DATABASE_URL=db, PORT=str(port))
    log = (tmp_path / "web.log").open("w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "citeq"), "web"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def up():
        assert proc.poll() is None, (tmp_path / "web.log").read_text()
        try:
            return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(up, timeout=30, interval=0.2, message="citeq web answering")
        assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "citeq"
        assert "citeq_analysis_jobs" in httpx.get(f"{base}/metrics").text
        assert httpx.get(f"{base}/api/analyses").status_code == 401
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
