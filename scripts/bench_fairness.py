"""Benchmark: one user's large analysis against another's small one (issue 29, first item).

    .venv/bin/python scripts/bench_fairness.py                  # a 2,000-citation analysis vs a 7-citation one
    .venv/bin/python scripts/bench_fairness.py --big 500        # quicker
    .venv/bin/python scripts/bench_fairness.py --big 20000 --per-analysis 8 --grouped-only   # issue 29's size

Two users, one source each (a short text by Nakamura, 2020); user 1's Markdown thesis cites it
--big times, user 2's 7 times (one citation a line, each claim worded apart, so each costs its
own embedding). Real worker processes (``dramatiq actors``,
2 x 4 threads, the offline judge). Figures, side by side in one run, for the judge messages
grouped per analysis (``CITEQ_JUDGE_PER_ANALYSIS``: --per-analysis, default 4 and 8; 8 is the
workers' default) and not grouped (``=0``):

* the small analysis first (the workers' first analysis: it loads the embedding model), then
  alone: from its admission to its success, on an idle system;
* the same while the large analysis is judging (admitted once the large one has its first
  verdict), and how long the large one took in all.

Database: DATABASE_URL when set, else the embedded server (database ``citeq_bench_fairness``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.settings import PipelineSettings, QueueSettings  # noqa: E402

from scripts._benchdb import Workers, database, sql  # noqa: E402

SOURCE = ("Heat waves and excess mortality in older adults\nYuki Nakamura, 2020\n\n"
          "Excess mortality rose by 18 percent among adults over 75 during heat waves.\n")
#: One citation line; every line of every thesis names another region, so each claim is embedded
#: on its own (the local embedder remembers vectors by text: one repeated line cost one embedding).
LINE = "Excess mortality rose by 18 percent among adults over 75 during heat waves in region {} (Nakamura, 2020)."
REFERENCE = "Nakamura, Y. (2020). Heat waves and excess mortality in older adults. Working notes, 7."


def say(msg: str) -> None:
    print(msg, flush=True)


def thesis(citations: int, copy: int) -> bytes:
    body = "\n\n".join(LINE.format(f"{copy}-{i}") for i in range(citations))
    return f"# A thesis\n\n## 1 Introduction\n\n{body}\n\n## References\n\n{REFERENCE}\n".encode()


def given_user(url: str, user: int, citations: int, copies: int) -> tuple[list[int], int]:
    """An account with ``copies`` theses of ``citations`` citations and the source, parsed."""
    from analysis.pipeline.intake import parsing, uploads

    sql(url, "INSERT INTO accounts (user_id, credits) VALUES (%s, 100)", user)
    files = [uploads.UploadFile(filename=f"thesis{i}.md", data=thesis(citations, i), kind="thesis")
             for i in range(copies)]
    files.append(uploads.UploadFile(filename="heat_notes.txt", data=SOURCE.encode(), kind="source"))
    settings = uploads.PipelineSettings(max_staged_bytes=10**10)
    staged = uploads.stage_upload(user, files, settings=settings)
    parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env())
    rows = sql(url, "SELECT id, kind::text FROM documents WHERE session_id = %s ORDER BY id", staged.session_id)
    return [i for i, k in rows if k == "thesis"], next(i for i, k in rows if k == "source")


def finished(url: str, job_id: int, deadline: float) -> float:
    """Wait for the job to succeed; seconds from its admission to its finish (database clock)."""
    while True:
        row = sql(url, "SELECT status::text, extract(epoch FROM finished_at - created_at) FROM analysis_jobs "
                       "WHERE id = %s", job_id)[0]
        if row[0] in ("succeeded", "failed", "canceled"):
            if row[0] != "succeeded":
                raise RuntimeError(f"job {job_id} ended {row[0]}")
            return float(row[1])
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} still {row[0]}")
        time.sleep(0.05)  # the benchmark's poll


def run(url: str, per_analysis: int, big: list[int], small: list[int], sources: dict[int, int],
        samples: int) -> dict:
    from analysis.queue import userqueue

    os.environ.pop("CITEQ_ANALYZE_WORK", None)
    sql(url, "DELETE FROM citeq_workers")
    workers = Workers(url, 2, 4, env={"CITEQ_JUDGE": "offline", "CITEQ_JUDGE_PER_ANALYSIS": str(per_analysis)})
    queue_settings = QueueSettings.from_env()

    def small_one() -> float:
        return finished(url, userqueue.admit(2, small.pop(), [sources[2]], settings=queue_settings).job_id, deadline)

    try:
        deadline = time.monotonic() + 1800
        # the first analysis a worker process judges loads the embedding model: not the idle latency
        first = small_one()
        alone = [small_one() for _ in range(samples)]
        big_job = userqueue.admit(1, big.pop(), [sources[1]], settings=queue_settings).job_id
        while not sql(url, "SELECT count(*) FROM job_citations WHERE job_id = %s AND verdict IS NOT NULL",
                      big_job)[0][0]:
            time.sleep(0.05)
        # one after another while the large one judges; a sample that ends after it is still counted
        loaded, big_done = [], 0
        for _ in range(samples):
            loaded.append(small_one())
            big_done += sql(url, "SELECT status::text FROM analysis_jobs WHERE id = %s", big_job)[0][0] == "succeeded"
        big_seconds = finished(url, big_job, deadline)
    finally:
        workers.stop()
    return {"first": first, "alone": alone, "loaded": loaded, "big": big_seconds, "late": big_done}


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):5.2f} s, max {max(values):5.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", type=int, default=2000, help="citations of the large analysis")
    parser.add_argument("--small", type=int, default=7, help="citations of the small analysis")
    parser.add_argument("--per-analysis", type=int, nargs="+", default=[4, 8],
                        help="CITEQ_JUDGE_PER_ANALYSIS values to run (0, not grouped, runs too unless --grouped-only)")
    parser.add_argument("--samples", type=int, default=5,
                        help="small analyses alone, then as many beside the large one, one after another")
    parser.add_argument("--grouped-only", action="store_true",
                        help="skip the run not grouped: with a large --big the small analysis waits there "
                             "behind every judge message of the large one, which takes as long again")
    args = parser.parse_args()
    url = database("citeq_bench_fairness")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the actors' broker, for admissions from this process

    say(f"== fairness: a {args.big:,}-citation analysis (user 1) and a {args.small}-citation one (user 2)")
    t0 = time.perf_counter()
    runs = [p for p in args.per_analysis if p > 0] if args.grouped_only else [*args.per_analysis, 0]
    big, source1 = given_user(url, 1, args.big, len(runs))
    small, source2 = given_user(url, 2, args.small, (1 + 2 * args.samples) * len(runs))
    say(f"  uploads parsed in {time.perf_counter() - t0:.1f} s")
    sources = {1: source1, 2: source2}
    for per_analysis in runs:
        name = f"grouped per analysis, {per_analysis} in flight" if per_analysis else "not grouped"
        r = run(url, per_analysis, big, small, sources, args.samples)
        say(f"  {name}: small first {r['first']:.2f} s; small alone {_spread(r['alone'])}; "
            f"small beside the large {_spread(r['loaded'])}; large {r['big']:.1f} s"
            + (f" ({r['late']} of the samples ended after it)" if r['late'] else ""))


if __name__ == "__main__":
    main()
