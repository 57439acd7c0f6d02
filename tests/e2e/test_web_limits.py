"""Slow clients against a real `citeq web` process on loopback: bounded loops, deadlines, no sleeps
as synchronisation (a socket is polled with select until the server acts or a deadline passes)."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from analysis.surface import accounts
from tests.conftest import ROOT, query
from tests.integration.conftest import add_documents, queue_broker, wait_for  # noqa: F401

pytestmark = pytest.mark.e2e


class Addr(tuple):
    """(host, port) of a server, with the ``pid`` of its process."""

    pid: int


@contextmanager
def citeq_web(db: str, tmp_path: Path, **env: str):
    """A `citeq web` process with the given CITEQ_* settings: its (host, port) with ``.pid``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_path = tmp_path / f"web-{port}.log"
    proc = subprocess.Popen([str(Path(sys.executable).parent / "citeq"), "web", "--log-level", "warning"], cwd=ROOT,
                            env=dict(os.environ, DATABASE_URL=db, PORT=str(port), **env),
                            stdout=log_path.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def up():
        assert proc.poll() is None, log_path.read_text()
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(up, timeout=30, interval=0.2, message="citeq web answering")
        addr = Addr(("127.0.0.1", port))
        addr.pid = proc.pid
        yield addr
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


def connect(addr, first: bytes) -> socket.socket:
    s = socket.create_connection(addr, timeout=5)
    s.sendall(first)
    s.setblocking(False)
    return s


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server closed (or reset) the socket; reads whatever it answered."""
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def trickle_until_closed(sockets: list[socket.socket], deadline: float, byte: bytes = b"a") -> float:
    """Send one byte per socket every 0.2 s until the server closed them all; seconds it took."""
    start = time.monotonic()
    open_ = list(sockets)
    while open_:
        assert time.monotonic() < deadline, f"{len(open_)} of {len(sockets)} slow connections still open"
        ready, _, _ = select.select(open_, [], [], 0.2)
        for s in ready:
            if closed_by_server(s):
                open_.remove(s)
        for s in open_:
            try:
                s.send(byte)
            except (BrokenPipeError, ConnectionResetError):
                open_.remove(s)
    return time.monotonic() - start


def response_of(s: socket.socket, deadline: float) -> bytes:
    """Everything the server sends until it closes the socket (or the deadline)."""
    got = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], 0.2)
        if ready:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            got += chunk
            if _complete(got):
                break
    return got


def _complete(got: bytes) -> bool:
    """A whole response: headers, and as many body bytes as its Content-Length says."""
    head, sep, body = got.partition(b"\r\n\r\n")
    if not sep:
        return False
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return match is not None and len(body) >= int(match.group(1))


def test_slow_headers_are_cut_off_and_others_are_served_meanwhile(db, tmp_path):
    with citeq_web(db, tmp_path, CITEQ_WEB_HEADER_TIMEOUT="1") as addr:
        slow = [connect(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ") for _ in range(100)]
        try:
            assert httpx.get(f"http://{addr[0]}:{addr[1]}/healthz", timeout=5).status_code == 200
            trickle_until_closed(slow, deadline=time.monotonic() + 20)
        finally:
            for s in slow:
                s.close()


def test_a_slow_body_gets_408(db, tmp_path, queue_broker):
    token = accounts.mint_token(queue_broker, accounts.create(queue_broker, "alice"))
    with citeq_web(db, tmp_path, CITEQ_WEB_BODY_TIMEOUT="1") as addr:
        s = connect(addr, f"POST /api/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"thesis_id\"".encode())
        try:
            answer = response_of(s, deadline=time.monotonic() + 15)
        finally:
            s.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b"body_timeout" in answer


def test_slow_json_bodies_count_against_the_admit_limit_when_they_start(db, tmp_path, queue_broker, conn):
    user = accounts.create(queue_broker, "alice", credits=50)
    token = accounts.mint_token(queue_broker, user)
    thesis, sources = add_documents(conn, user)
    head = (f"POST /api/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 60\r\n\r\n").encode()
    with citeq_web(db, tmp_path, CITEQ_RATE_ADMITS="10", CITEQ_WEB_BODY_TIMEOUT="60") as addr:
        slow = [connect(addr, head) for _ in range(10)]
        try:
            wait_for(lambda: query(conn, "SELECT count(*) FROM request_hits WHERE user_id = %s", user)[0][0] == 10,
                     timeout=20, message="ten slow admits counted before their bodies arrive")
            r = httpx.post(f"http://{addr[0]}:{addr[1]}/api/analyses", headers={"Authorization": f"Bearer {token}"},
                           json={"thesis_id": thesis, "source_ids": sources}, timeout=10)
            assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited", r.text
        finally:
            for s in slow:
                s.close()
    assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 0


def test_connections_beyond_the_cap_get_503(db, tmp_path):
    with citeq_web(db, tmp_path, CITEQ_WEB_MAX_CONNECTIONS="5", CITEQ_WEB_HEADER_TIMEOUT="30") as addr:
        held = [connect(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n") for _ in range(5)]
        try:
            r = httpx.get(f"http://{addr[0]}:{addr[1]}/healthz", timeout=5)
            assert r.status_code == 503, r.text
        finally:
            for s in held:
                s.close()
        wait_for(lambda: httpx.get(f"http://{addr[0]}:{addr[1]}/healthz", timeout=5).status_code == 200,
                 timeout=10, message="served again once the held connections closed")
