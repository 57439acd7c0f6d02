"""Benchmark the parse worker's memory on large text uploads (issue 29).

    .venv/bin/python scripts/bench_worker_memory.py               # 50 MB, once and three at once
    .venv/bin/python scripts/bench_worker_memory.py --mb 20

One real worker process (``dramatiq actors --processes 1 --threads 4``) parses one-line
plain-text uploads of ``--mb`` MB staged by this process, first one alone, then three
(three users) at once. Printed for each round: the worker process's peak RSS (the process
that runs the actors, sampled every 20 ms; the parse sandbox's fork server and children
are counted apart), the peak of the whole process tree, the wall time and how each item
ended (a text over CITEQ_PARSE_MAX_TEXT_CHARS is refused ``document_too_long``).

Database: the server of DATABASE_URL when set, else the embedded one; the database
``citeq_bench_worker_memory`` is created afresh and migrated.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import Workers, database, sql  # noqa: E402


def say(msg: str) -> None:
    print(msg, flush=True)


def one_line(mb: int) -> bytes:
    word = b"spacing homework improves recall "
    return (word * (mb * 2**20 // len(word) + 1))[: mb * 2**20]


class Sampler:
    """Peak RSS of the worker process and of the whole tree, sampled in a thread."""

    def __init__(self, root_pid: int) -> None:
        self.root = psutil.Process(root_pid)
        self.worker_peak = self.tree_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            try:
                procs = [self.root, *self.root.children(recursive=True)]
                rss = {p.pid: p.memory_info().rss for p in procs}
            except psutil.Error:
                continue
            self.tree_peak = max(self.tree_peak, sum(rss.values()))
            workers = [p for p in self.root.children() if "forkserver" not in " ".join(p.cmdline())
                       and "resource_tracker" not in " ".join(p.cmdline())]
            self.worker_peak = max([self.worker_peak, *(rss.get(p.pid, 0) for p in workers)])

    def stop(self) -> tuple[int, int]:
        self._stop.set()
        self._thread.join()
        return self.worker_peak, self.tree_peak


def round_of(url: str, users: list[int], data: bytes, root_pid: int, timeout: float) -> str:
    from analysis.pipeline.intake.uploads import PipelineSettings, UploadFile, stage_upload

    settings = PipelineSettings.from_env(max_staged_bytes=10**10, max_file_bytes=len(data), max_active_parse_jobs=100)
    sampler = Sampler(root_pid)
    start = time.perf_counter()
    jobs = [stage_upload(u, [UploadFile(filename=f"big_{u}.txt", data=data, kind="source")],
                         settings=settings).parse_job_id for u in users]
    deadline = time.monotonic() + timeout
    while sql(url, "SELECT count(*) FROM parse_jobs WHERE id = ANY(%s) AND finished_at IS NULL", jobs)[0][0]:
        if time.monotonic() > deadline:
            raise RuntimeError("parse jobs did not finish")
        time.sleep(0.1)
    elapsed = time.perf_counter() - start
    worker, tree = sampler.stop()
    ended = sql(url, "SELECT status::text, coalesce(error_code, '') FROM parse_items WHERE job_id = ANY(%s)", jobs)
    return (f"worker process peak RSS {worker / 2**20:.0f} MB, process tree peak {tree / 2**20:.0f} MB, "
            f"{elapsed:.1f} s; items: {', '.join(' '.join(filter(None, e)) for e in ended)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of each upload in MB (default 50)")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    url = database("citeq_bench_worker_memory")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the actors' broker, for sends from this process

    for user in (1, 2, 3, 4):
        sql(url, "INSERT INTO accounts (user_id, credits) VALUES (%s, 0)", user)
    data = one_line(args.mb)
    workers = Workers(url, 1, 4)
    try:
        idle = psutil.Process(workers.proc.pid)
        base = max((c.memory_info().rss for c in idle.children()), default=0)
        say(f"database: {url}; one worker process x 4 threads, idle worker RSS {base / 2**20:.0f} MB")
        say(f"one {args.mb} MB one-line text: " + round_of(url, [1], data, workers.proc.pid, args.timeout))
        say(f"three {args.mb} MB one-line texts at once: "
            + round_of(url, [2, 3, 4], data, workers.proc.pid, args.timeout))
    finally:
        workers.stop()


if __name__ == "__main__":
    main()
