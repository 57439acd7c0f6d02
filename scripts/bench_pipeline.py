"""Benchmark the analysis pipeline (issue 4).

    .venv/bin/python scripts/bench_pipeline.py              # the full run
    .venv/bin/python scripts/bench_pipeline.py --users 10   # a quicker one

Figures, all on this machine in one run:

* parse throughput on the sample PDFs: text extraction and passage splitting alone
  (pypdf + chunking, in process), and the whole parse step (staged bytes in Postgres →
  documents, pages, chunks, session links; ``analysis.pipeline.intake.parsing.parse_job`` in process),
  in MB/s and pages/s;
* citations judged per second with the offline judge on 1 and 2 real worker processes
  (``dramatiq actors``, 4 threads each): --users users each analyse both sample theses
  against the five sample sources; the rate is judged citations over the span from the
  first to the last verdict (``judged_at``), and the end-to-end figure includes
  extraction and the per-user queue;
* the source store's L1 cache: lookup latency on a hit (one version read) against a
  rebuild from Postgres chunks, for a session with the five sample sources.

Database: the server of DATABASE_URL when set, else the embedded one; the database
``citeq_bench_pipeline`` is created afresh and migrated.
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

SAMPLES = ROOT / "sample_data"
SOURCES = ("okafor_lindqvist_2019.pdf", "hartmann_2020_feedback.pdf", "mueller_2021_spaced_homework.txt",
           "castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")
THESES = ("thesis_retrieval_practice.pdf", "thesis_urban_heat.pdf")


def say(msg: str) -> None:
    print(msg, flush=True)


def uploads_of(names, kind="source"):
    from analysis.pipeline.intake.uploads import UploadFile

    return [UploadFile(filename=n, data=(SAMPLES / n).read_bytes(), kind=kind) for n in names]


# -- parse --------------------------------------------------------------------------------


def bench_extraction(rounds: int) -> tuple[float, float]:
    from analysis.pipeline.retrieval.chunking import split_passages
    from analysis.pipeline.documents.readers import extract_pages

    pdfs = [p for p in sorted(SAMPLES.glob("*.pdf"))]
    data = [(p.name, p.read_bytes()) for p in pdfs]
    size = sum(len(d) for _, d in data) * rounds
    pages = 0
    start = time.perf_counter()
    for _ in range(rounds):
        for name, raw in data:
            extracted = extract_pages(raw, name)
            split_passages(extracted)
            pages += len(extracted)
    elapsed = time.perf_counter() - start
    return size / elapsed / 1e6, pages / elapsed


def bench_parse_step(url: str, rounds: int) -> tuple[float, float]:
    from analysis.pipeline.intake import parsing, uploads

    pdfs = [p.name for p in sorted(SAMPLES.glob("*.pdf"))]
    sql(url, "INSERT INTO accounts (user_id, credits) VALUES (0, 0)")
    size = pages = 0
    elapsed = 0.0
    settings = uploads.PipelineSettings(max_active_parse_jobs=10_000, max_staged_bytes=10**10)
    for _ in range(rounds):
        staged = uploads.stage_upload(0, uploads_of(pdfs), settings=settings)
        start = time.perf_counter()
        parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env())
        elapsed += time.perf_counter() - start
        size += staged.bytes
    pages = sql(url, "SELECT coalesce(sum(pages), 0) FROM documents WHERE user_id = 0")[0][0]
    return size / elapsed / 1e6, pages / elapsed


# -- judging ------------------------------------------------------------------------------


def pipeline_workers(url: str, processes: int, threads: int) -> Workers:
    """Workers running the real analysis with the offline judge."""
    os.environ.pop("CITEQ_ANALYZE_WORK", None)
    return Workers(url, processes, threads, env={"CITEQ_JUDGE": "offline"})


def given_corpora(url: str, users: range) -> dict[int, tuple[list[int], list[int]]]:
    """Each user uploads and parses the sample corpus (in process): (thesis ids, source ids)."""
    from analysis.pipeline.intake import parsing, uploads

    corpora = {}
    for user in users:
        sql(url, "INSERT INTO accounts (user_id, credits) VALUES (%s, 1000)", user)
        staged = uploads.stage_upload(user, uploads_of(THESES, "thesis") + uploads_of(SOURCES),
                                      settings=PipelineSettings.from_env())
        parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env())
        rows = sql(url, "SELECT id, kind::text FROM documents WHERE session_id = %s ORDER BY id", staged.session_id)
        corpora[user] = ([i for i, k in rows if k == "thesis"], [i for i, k in rows if k == "source"])
    return corpora


def bench_judging(url: str, corpora, processes: int) -> tuple[int, float, float]:
    """(citations judged, judged/s from first to last verdict, citations/s end to end)."""
    from analysis.queue import userqueue

    first_job = sql(url, "SELECT coalesce(max(id), 0) FROM analysis_jobs")[0][0]
    sql(url, "DELETE FROM citeq_workers")
    workers = pipeline_workers(url, processes, threads=4)
    try:
        start = time.perf_counter()
        for user, (theses, sources) in corpora.items():
            for thesis in theses:
                userqueue.admit(user, thesis, sources, settings=QueueSettings.from_env())
        deadline = time.monotonic() + 600
        while sql(url, "SELECT count(*) FROM analysis_jobs WHERE id > %s AND status NOT IN "
                       "('succeeded', 'failed')", first_job)[0][0]:
            if time.monotonic() > deadline:
                raise RuntimeError("analyses did not finish")
            time.sleep(0.05)
        end_to_end = time.perf_counter() - start
    finally:
        workers.stop()
    failed = sql(url, "SELECT count(*) FROM analysis_jobs WHERE id > %s AND status = 'failed'", first_job)[0][0]
    if failed:
        raise RuntimeError(f"{failed} analyses failed")
    n, span = sql(url, """
        SELECT count(*), extract(epoch FROM max(judged_at) - min(judged_at))::float8
        FROM job_citations WHERE job_id > %s AND message_id IS NOT NULL""", first_job)[0]
    total = sql(url, "SELECT count(*) FROM job_citations WHERE job_id > %s", first_job)[0][0]
    return n, n / span, total / end_to_end


# -- the source store ---------------------------------------------------------------------


def bench_cache(url: str, session_id: int, user_id: int, rounds: int) -> tuple[float, float]:
    import dramatiq

    from analysis.pipeline.retrieval.sources import SourceStore

    store = SourceStore(dramatiq.get_broker())
    store.index(user_id, session_id)
    hits, rebuilds = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        store.index(user_id, session_id)
        hits.append(time.perf_counter() - start)
        start = time.perf_counter()
        store.rebuild(user_id, session_id)
        rebuilds.append(time.perf_counter() - start)
    return statistics.median(hits) * 1000, statistics.median(rebuilds) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=40, help="users analysing both theses (default 40)")
    parser.add_argument("--rounds", type=int, default=20, help="parse rounds over the sample PDFs")
    args = parser.parse_args()

    url = database("citeq_bench_pipeline")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the actors' broker, for sends from this process

    say(f"database: {url}")
    mbs, pps = bench_extraction(args.rounds)
    say(f"parse, text extraction + passages (pypdf, in process): {mbs:.2f} MB/s, {pps:.0f} pages/s")
    mbs, pps = bench_parse_step(url, args.rounds)
    say(f"parse step incl. Postgres (documents, pages, chunks, links): {mbs:.2f} MB/s, {pps:.0f} pages/s")

    corpora = given_corpora(url, range(1, args.users + 1))
    for processes in (1, 2):
        n, judged, end_to_end = bench_judging(url, corpora, processes)
        say(f"offline judge, {processes} worker process(es) x 4 threads: {judged:.0f} citations judged/s "
            f"({n} judged; {end_to_end:.0f} citations/s end to end incl. extraction and the per-user queue)")

    session_id = sql(url, "SELECT session_id FROM documents WHERE user_id = 1 LIMIT 1")[0][0]
    hit_ms, rebuild_ms = bench_cache(url, session_id, 1, rounds=100)
    say(f"source store, 5 sources: L1 hit {hit_ms:.2f} ms (incl. the version read), rebuild {rebuild_ms:.2f} ms "
        f"(median of 100)")


if __name__ == "__main__":
    main()
