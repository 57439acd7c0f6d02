"""Uploads through a real `citeq web` process: its memory, and what other users feel meanwhile.

    python scripts/bench_uploads.py [--runs 3] [--size-mb 40] [--concurrent 10] [--concurrent-mb 20]

1. Peak RSS of the web process while one client uploads a ``--size-mb`` file (sampled every
   5 ms with psutil), against its RSS just before.
2. ``--concurrent`` clients of one user upload ``--concurrent-mb`` files at once (the user's
   parse-slot cap of 3 refuses most of them) while a second user asks ``GET /api/me`` every
   20 ms: that user's latency (p50, p99, max) and the uploads' answers.

Uses DATABASE_URL's server or the embedded one (a database of its own, dropped first); no
worker runs, so staged files stay staged and the caps bite as in a busy system.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from _benchdb import database  # noqa: E402

MB = 1024 * 1024


def start_web(url: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "citeq"), "web", "--log-level", "warning"],
                            cwd=ROOT, env=dict(os.environ, DATABASE_URL=url, PORT=str(port), **env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("citeq web did not start")
        time.sleep(0.1)


def token_for(url: str, name: str) -> str:
    import actors  # noqa: F401 - the broker on DATABASE_URL

    from analysis.surface import accounts

    broker = actors.broker
    return accounts.mint_token(broker, accounts.create(broker, name, credits=10))


class PeakRss:
    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.before = self.peak = self.proc.memory_info().rss
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            self.done.wait(0.005)

    def stop(self) -> tuple[float, float]:
        self.done.set()
        self.thread.join()
        return self.before / MB, self.peak / MB


def one_big_upload(base: str, pid: int, token: str, size: int) -> tuple[float, float, int]:
    data = os.urandom(size)
    rss = PeakRss(pid)
    r = httpx.post(f"{base}/api/uploads", headers={"Authorization": f"Bearer {token}"},
                   files={"files": ("big.txt", data, "text/plain")}, timeout=300)
    before, peak = rss.stop()
    return before, peak, r.status_code


def concurrent_uploads(base: str, uploader: str, other: str, n: int, size: int) -> tuple[list[float], list[int]]:
    data = os.urandom(size)
    statuses: list[int] = []
    latencies: list[float] = []
    done = threading.Event()

    def upload() -> None:
        r = httpx.post(f"{base}/api/uploads", headers={"Authorization": f"Bearer {uploader}"},
                       files={"files": ("big.txt", data, "text/plain")}, timeout=300)
        statuses.append(r.status_code)

    def poll() -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {other}"}, timeout=30) as client:
            while not done.is_set():
                t0 = time.perf_counter()
                client.get(f"{base}/api/me").raise_for_status()
                latencies.append(time.perf_counter() - t0)
                done.wait(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    uploads = [threading.Thread(target=upload) for _ in range(n)]
    for t in uploads:
        t.start()
    for t in uploads:
        t.join()
    done.set()
    poller.join()
    return latencies, sorted(statuses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size-mb", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=10)
    parser.add_argument("--concurrent-mb", type=int, default=20)
    args = parser.parse_args()
    url = database("citeq_bench_uploads")
    os.environ["DATABASE_URL"] = url
    env = {"CITEQ_MAX_UPLOAD_BYTES": str((args.size_mb + 8) * MB), "CITEQ_MAX_FILE_BYTES": str((args.size_mb + 8) * MB),
           "CITEQ_RATE_UPLOADS": "1000", "CITEQ_WEB_MAX_CONNECTIONS": "500"}
    proc, base = start_web(url, env)
    try:
        print(f"one {args.size_mb} MB upload: web process RSS before -> peak (growth)")
        for run in range(args.runs):
            before, peak, status = one_big_upload(base, proc.pid, token_for(url, f"big{run}"), args.size_mb * MB)
            print(f"  run {run + 1}: {before:.0f} -> {peak:.0f} MB (+{peak - before:.0f} MB, "
                  f"{(peak - before) / args.size_mb:.2f}x the file), HTTP {status}")
        print(f"{args.concurrent} concurrent {args.concurrent_mb} MB uploads of one user; another user's GET /api/me")
        for run in range(args.runs):
            latencies, statuses = concurrent_uploads(base, token_for(url, f"up{run}"), token_for(url, f"other{run}"),
                                                     args.concurrent, args.concurrent_mb * MB)
            ms = sorted(x * 1000 for x in latencies)
            p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            print(f"  run {run + 1}: {len(ms)} requests, p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, "
                  f"max {ms[-1]:.1f} ms; uploads answered {statuses}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
