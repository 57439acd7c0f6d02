"""Benchmark the report of one analysis (issue 14): build it from Postgres and render it.

    .venv/bin/python scripts/bench_report.py                    # 500 citations, 20 rounds
    .venv/bin/python scripts/bench_report.py --citations 2000 --rounds 5

A finished job of one user with ``--citations`` judged citations over 20 sources is written
straight into a fresh database (``citeq_bench_report``; the server of DATABASE_URL when set,
else the embedded one), with texts of thesis-like length: a claim of about 200 characters,
an evidence passage of about 800, a rationale of about 200, every fifth citation
unresolved. Then, per round, on the server side of the web process:

* build: the two named queries of ``analysis.surface.report.build`` and the pydantic model;
* html / csv / json: rendering that model;
* route html / csv / json: the whole HTTP route in process (Starlette's TestClient: token
  check, build, render, response), which is what a request costs the web process.

It prints the median, minimum and maximum over the rounds (milliseconds) and whether a
report builds and renders in under a second.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import database, sql  # noqa: E402

WORDS = ("retrieval practice quizzes improved delayed test scores by fourteen percentage points in secondary "
         "science classes while transfer gains were smaller and not significant in two of four schools the "
         "control condition spent the same ten minutes rereading a summary").split()


def text(seed: int, chars: int) -> str:
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < chars:
        out.append(WORDS[(i * 7 + len(out) * 3) % len(WORDS)])
        i += 1
    return " ".join(out).capitalize() + "."


def seed(url: str, citations: int) -> int:
    """One user, a thesis, 20 sources and a finished job with ``citations`` judged citations: its id."""
    sql(url, "INSERT INTO accounts (user_id, name, credits) VALUES (1, 'bench', 10)")
    thesis = sql(url, "INSERT INTO documents (user_id, kind, filename, status, pages) "
                      "VALUES (1, 'thesis', 'thesis.pdf', 'parsed', 120) RETURNING id")[0][0]
    sources = [r[0] for r in sql(url, "INSERT INTO documents (user_id, kind, filename, status, pages, doi) "
                                      "SELECT 1, 'source', 'source_' || i || '.pdf', 'parsed', 30, "
                                      "'10.5555/bench.' || i FROM generate_series(1, 20) i RETURNING id")]
    job = sql(url, "INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id, judge, retrieval_mode, "
                   "started_at, finished_at, extracted_at, citations_total, pending_citations) "
                   "VALUES (1, %s, 'succeeded', 1, 'bench', 'offline', 'bm25', now() - interval '40 s', now(), "
                   "now() - interval '39 s', %s, 0) RETURNING id", thesis, citations)[0][0]
    sql(url, "INSERT INTO analysis_job_documents (job_id, document_id) SELECT %s, unnest(%s::bigint[])",
        job, [thesis, *sources])
    verdicts = ["supported", "partially_supported", "not_supported", "uncertain"]
    rows = []
    for i in range(citations):
        unresolved = i % 5 == 4
        rows.append((job, i, text(i, 200), text(i, 220), f"Author{i % 37} et al., {2000 + i % 24}", 1 + i // 5,
                     f"[{i % 60}] Author{i % 37}, A. ({2000 + i % 24}). A title. Journal, 3, 1-20.",
                     None if unresolved else sources[i % 20], None if unresolved else "author_year",
                     "no reference-list entry matches the marker" if unresolved else None,
                     "source_missing" if unresolved else verdicts[i % 4], 0.5 + (i % 50) / 100,
                     None if unresolved else text(i + 1, 800), None if unresolved else 1 + i % 30, text(i + 2, 200)))
    sql(url, """
        INSERT INTO job_citations (job_id, user_id, ordinal, claim, sentence, marker, page, reference, reference_key,
                                   source_document_id, match_method, unresolved_reason, verdict, confidence,
                                   evidence, evidence_page, rationale, judged_at)
        SELECT r.job, 1, r.ordinal, r.claim, r.sentence, r.marker, r.page, jsonb_build_object('raw', r.ref, 'key', 'k'),
               'k', r.source, r.method, r.reason, r.verdict::citation_verdict, r.confidence, r.evidence, r.epage,
               r.rationale, now()
        FROM unnest(%s::bigint[], %s::int[], %s::text[], %s::text[], %s::text[], %s::int[], %s::text[], %s::bigint[],
                    %s::text[], %s::text[], %s::text[], %s::real[], %s::text[], %s::int[], %s::text[])
             AS r(job, ordinal, claim, sentence, marker, page, ref, source, method, reason, verdict, confidence,
                  evidence, epage, rationale)""", *map(list, zip(*rows)))
    sql(url, "ANALYZE")
    return job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citations", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()

    import os

    url = database("citeq_bench_report")
    os.environ["DATABASE_URL"] = url
    job_id = seed(url, args.citations)

    from fastapi.testclient import TestClient

    import actors
    from analysis.surface import accounts, report
    from web.app import create_app

    broker = actors.broker
    headers = {"Authorization": f"Bearer {accounts.mint_token(broker, 1)}"}
    client = TestClient(create_app(broker=broker))
    built = report.build(broker, job_id, user_id=1)
    assert built.total == args.citations
    steps = {
        "build (2 queries + model)": lambda: report.build(broker, job_id, user_id=1),
        "render html": lambda: report.render_html(built),
        "render csv": lambda: report.render_csv(built),
        "render json": lambda: report.render_json(built),
        "route html (build + render + HTTP)": lambda: client.get(f"/api/analyses/{job_id}/report", headers=headers),
        "route csv": lambda: client.get(f"/api/analyses/{job_id}/report.csv", headers=headers),
        "route json": lambda: client.get(f"/api/analyses/{job_id}/report.json", headers=headers),
    }
    for step in steps.values():  # warm: prepared connections, imports, first-call caches
        step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append((time.perf_counter() - t0) * 1000)
    sizes = {"html": len(report.render_html(built).encode()), "csv": len(report.render_csv(built).encode()),
             "json": len(report.render_json(built).encode())}
    print(f"report of {args.citations} citations, {args.rounds} rounds (ms: median, min-max); "
          f"html {sizes['html'] / 1024:.0f} KiB, csv {sizes['csv'] / 1024:.0f} KiB, json {sizes['json'] / 1024:.0f} KiB")
    for name, values in times.items():
        print(f"  {name:<36} {statistics.median(values):8.1f}   {min(values):.1f}-{max(values):.1f}")
    worst = max(max(times[f"route {f}" if f != "html" else "route html (build + render + HTTP)"]) for f in
                ("html", "csv", "json"))
    print(f"slowest route call: {worst:.0f} ms -> {'under' if worst < 1000 else 'NOT under'} a second")
    client.close()
    broker.close()


if __name__ == "__main__":
    main()
