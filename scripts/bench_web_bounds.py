"""Benchmark the web process's bounds (issue 29): idle connections and non-reading clients.

    .venv/bin/python scripts/bench_web_bounds.py
    .venv/bin/python scripts/bench_web_bounds.py --clients 20 --citations 11000 --write-timeout 10

A real `citeq web` process on loopback with the shipped limits (CITEQ_WEB_* unset), and:

* **idle connections**: ``--idle`` (200) connections that send nothing, then 40 GETs of
  /healthz one after another: how many were answered 200, and how long until the server
  had closed every idle connection;
* **non-reading clients**: a job with ``--citations`` citations of about 1 KB each (its
  HTML report about 16 MB), ``--clients`` clients that ask for the report and never read
  (4 KiB receive buffers): the web process's RSS before, at its peak and after they were
  cut (CITEQ_WEB_WRITE_TIMEOUT, here ``--write-timeout``), the slowest /healthz meanwhile,
  and how long until the server had cut them all.

Database: the server of DATABASE_URL when set, else the embedded one; the database
``citeq_bench_web_bounds`` is created afresh and migrated. Every socket is closed and the
server stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import database, sql  # noqa: E402


def say(msg: str) -> None:
    print(msg, flush=True)


def start_web(url: str, **env: str) -> tuple[subprocess.Popen, str, tuple[str, int]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "citeq"), "web", "--log-level", "warning"], cwd=ROOT,
                            env=dict(os.environ, DATABASE_URL=url, PORT=str(port), **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base, ("127.0.0.1", port)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("citeq web did not start")
        time.sleep(0.2)


def stop_web(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def closed(s: socket.socket) -> bool:
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def hung_up(s: socket.socket) -> bool:
    """Whether the server reset or closed the connection, seen without reading from it."""
    poller = select.poll()
    poller.register(s, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    return any(events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


def wait_closed(sockets: list[socket.socket], timeout: float) -> float:
    """Seconds until the server closed every socket (reading what reached them); inf past timeout."""
    start = time.monotonic()
    open_ = list(sockets)
    for s in open_:
        s.setblocking(False)
    while open_:
        if time.monotonic() - start > timeout:
            return float("inf")
        ready, _, _ = select.select(open_, [], [], 0.2)
        open_ = [s for s in open_ if not (s in ready and closed(s))]
    return time.monotonic() - start


def bench_idle(url: str, idle: int) -> None:
    proc, base, addr = start_web(url)
    sockets = [socket.create_connection(addr, timeout=5) for _ in range(idle)]
    try:
        answered = 0
        with httpx.Client(timeout=5) as client:
            for _ in range(40):
                try:
                    answered += client.get(f"{base}/healthz", headers={"Connection": "close"}).status_code == 200
                except httpx.TransportError:
                    pass
        gone = wait_closed(sockets, 60)
        say(f"{idle} idle connections: {answered} of 40 normal requests answered 200 "
            f"({answered / 40:.0%}); all idle connections closed by the server after {gone:.1f} s")
    finally:
        for s in sockets:
            s.close()
        stop_web(proc)


def given_report(url: str, citations: int) -> tuple[int, str]:
    """A user's job with ``citations`` citations of about 1 KB: (job id, a token of the user)."""
    import actors
    from analysis.surface import accounts

    user = accounts.create(actors.broker, f"reader-{os.getpid()}-{time.monotonic_ns()}")
    thesis = sql(url, "INSERT INTO documents (user_id, kind, filename, status) VALUES (%s, 'thesis', 't.pdf', "
                      "'parsed') RETURNING id", user)[0][0]
    source = sql(url, "INSERT INTO documents (user_id, kind, filename, status) VALUES (%s, 'source', 's.pdf', "
                      "'parsed') RETURNING id", user)[0][0]
    job = sql(url, "INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id) VALUES "
                   "(%s, %s, 'pending', 1, 'bench') RETURNING id", user, thesis)[0][0]
    sql(url, """
        INSERT INTO job_citations (job_id, user_id, ordinal, claim, sentence, marker, page, source_document_id,
                                   verdict, confidence, evidence, evidence_page, rationale, judged_at)
        SELECT %s, %s, i, repeat('claim text ', 30) || i, 'sentence', '(Author, 2020)', 1, %s,
               'uncertain', 0.5, repeat('evidence ', 50), 2, repeat('rationale ', 20), now()
        FROM generate_series(0, %s - 1) AS i""", job, user, source, citations)
    return job, accounts.mint_token(actors.broker, user)


def bench_readers(url: str, clients: int, citations: int, write_timeout: float) -> None:
    job, token = given_report(url, citations)
    proc, base, addr = start_web(url, CITEQ_WEB_WRITE_TIMEOUT=str(write_timeout))
    web = psutil.Process(proc.pid)
    try:
        size = len(httpx.get(f"{base}/api/analyses/{job}/report", timeout=120,
                             headers={"Authorization": f"Bearer {token}"}).content)
        before = web.memory_info().rss
        request = (f"GET /api/analyses/{job}/report HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {token}\r\n\r\n").encode()
        sockets = []
        for _ in range(clients):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(addr)
            s.sendall(request)
            sockets.append(s)
        start = time.monotonic()
        peak, slowest = before, 0.0
        open_ = list(sockets)
        while open_ and time.monotonic() - start < write_timeout + 60:
            peak = max(peak, web.memory_info().rss)
            t = time.perf_counter()
            httpx.get(f"{base}/healthz", timeout=10)
            slowest = max(slowest, time.perf_counter() - t)
            open_ = [s for s in open_ if not hung_up(s)]
            time.sleep(0.1)
        cut = time.monotonic() - start if not open_ else float("inf")
        for s in sockets:
            s.close()
        time.sleep(1)
        after = web.memory_info().rss
        say(f"{clients} clients not reading a {size / 1e6:.1f} MB report: web RSS {before / 2**20:.0f} MB before, "
            f"peak {peak / 2**20:.0f} MB (+{(peak - before) / 2**20:.0f} MB), {after / 2**20:.0f} MB after; "
            f"slowest /healthz meanwhile {slowest * 1000:.0f} ms; all cut after {cut:.1f} s "
            f"(write timeout {write_timeout:g} s)")
    finally:
        stop_web(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--citations", type=int, default=11000)
    parser.add_argument("--write-timeout", type=float, default=30.0)
    args = parser.parse_args()

    url = database("citeq_bench_web_bounds")
    os.environ["DATABASE_URL"] = url
    say(f"database: {url}")
    bench_idle(url, args.idle)
    bench_readers(url, args.clients, args.citations, args.write_timeout)


if __name__ == "__main__":
    main()
