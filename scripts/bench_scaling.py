"""Benchmark how parsing and analysis scale with the number of citations (issue 29).

    .venv/bin/python scripts/bench_scaling.py                      # 250, 1,000, 4,000, 16,000
    .venv/bin/python scripts/bench_scaling.py --sizes 250,1000     # a quicker one

Each size is one user's Markdown thesis with one source (a sample text) and N citations of
it, one line each (so the whole body is one long paragraph, the shape that made sentence
splitting quadratic). Real worker processes (``dramatiq actors``, the offline judge) do the
work; this process stages the upload and admits the analysis as the web would. Printed per
size:

* parse: from staging the upload (thesis and source) until its parse job ends;
* analysis: from admission until the job succeeds (extraction, fan-out, N offline
  verdicts), and its extraction part (admission until ``extracted_at``);
* milliseconds per citation, and the ratio of time to the previous size's time (linear
  cost keeps it near the size ratio, 4).

Database: the server of DATABASE_URL when set, else the embedded one; the database
``citeq_bench_scaling`` is created afresh and migrated.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.settings import PipelineSettings, QueueSettings  # noqa: E402

from scripts._benchdb import Workers, database, sql  # noqa: E402

SOURCE = ROOT / "sample_data" / "mueller_2021_spaced_homework.txt"


def say(msg: str) -> None:
    print(msg, flush=True)


def thesis(n: int) -> bytes:
    """A Markdown thesis with ``n`` one-line citations of the one source."""
    lines = ["# Homework schedules", "", "## Findings", ""]
    lines += [f"Spacing homework improved final test scores by {i % 50 + 1} percent in class {i} (Müller, 2021)."
              for i in range(n)]
    lines += ["", "## References", "",
              "Müller, H. (2021). Spaced or blocked? Homework schedules and long-term learning in lower "
              "secondary mathematics. Working paper, Institute for School Pedagogy.", ""]
    return "\n".join(lines).encode()


def wait_for(url: str, query: str, *params, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not sql(url, query, *params)[0][0]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s: {query}")
        time.sleep(0.05)


def run_size(url: str, user: int, n: int, timeout: float) -> tuple[float, float, float]:
    """(parse s, analysis s, extraction s) of one thesis with ``n`` citations."""
    from analysis.pipeline.intake.uploads import UploadFile, stage_upload
    from analysis.queue import userqueue

    sql(url, "INSERT INTO accounts (user_id, credits) VALUES (%s, 10)", user)
    files = [UploadFile(filename=f"thesis_{n}.md", data=thesis(n), kind="thesis"),
             UploadFile(filename=SOURCE.name, data=SOURCE.read_bytes(), kind="source")]
    start = time.perf_counter()
    staged = stage_upload(user, files, settings=PipelineSettings.from_env())
    wait_for(url, "SELECT finished_at IS NOT NULL FROM parse_jobs WHERE id = %s", staged.parse_job_id,
             timeout=timeout)
    parse = time.perf_counter() - start
    rows = sql(url, "SELECT id, kind::text FROM documents WHERE session_id = %s", staged.session_id)
    kinds = {k: i for i, k in rows}
    if set(kinds) != {"thesis", "source"}:
        failed = sql(url, "SELECT filename, error_code, error_reason FROM parse_items WHERE job_id = %s",
                     staged.parse_job_id)
        raise RuntimeError(f"parse failed: {failed}")
    start = time.perf_counter()
    job_id = userqueue.admit(user, kinds["thesis"], [kinds["source"]], settings=QueueSettings.from_env()).job_id
    wait_for(url, "SELECT finished_at IS NOT NULL FROM analysis_jobs WHERE id = %s", job_id, timeout=timeout)
    analysis = time.perf_counter() - start
    status, total, extraction = sql(url, """
        SELECT status::text, citations_total, extract(epoch FROM extracted_at - created_at)::float8
        FROM analysis_jobs WHERE id = %s""", job_id)[0]
    if status != "succeeded" or total != n:
        raise RuntimeError(f"analysis of {n} citations ended {status} with {total} citations")
    return parse, analysis, extraction


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="250,1000,4000,16000", help="citation counts, comma-separated")
    parser.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker process (default 4)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a size may take per step")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    url = database("citeq_bench_scaling")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the actors' broker, for sends from this process

    say(f"database: {url}; {args.processes} worker process(es) x {args.threads} threads, offline judge")
    workers = Workers(url, args.processes, args.threads, env={"CITEQ_JUDGE": "offline"})
    previous = None
    try:
        say(f"{'citations':>9} {'parse s':>8} {'analysis s':>10} {'(extract s)':>11} {'total s':>8} "
            f"{'ms/citation':>11} {'ratio':>6}")
        for user, n in enumerate(sizes, start=1):
            parse, analysis, extraction = run_size(url, user, n, args.timeout)
            total = parse + analysis
            ratio = f"{total / previous:6.2f}" if previous else "     -"
            say(f"{n:>9,} {parse:>8.2f} {analysis:>10.2f} {extraction:>11.2f} {total:>8.2f} "
                f"{total / n * 1000:>11.2f} {ratio}")
            previous = total
    finally:
        workers.stop()


if __name__ == "__main__":
    main()
