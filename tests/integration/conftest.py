"""Fixtures of the analysis-queue tests: the actors' own broker on the test database,
an in-process worker for it, and Given-helpers for accounts and documents."""

from __future__ import annotations

import json
from contextlib import contextmanager

import dramatiq
import pytest

from citeq import cli

from tests.conftest import query, wait_for  # noqa: F401 - re-exported to the tests
from tests.e2e import hooks


@pytest.fixture
def queue_broker(db, monkeypatch):
    """The broker of ``actors`` (with the serialized middleware and every actor), on the test db."""
    monkeypatch.setenv("DATABASE_URL", db)
    import actors

    actors.broker.settings.lease_seconds = 5
    actors.broker.settings.poll_interval = 0.2
    dramatiq.set_broker(actors.broker)
    return actors.broker


@contextmanager
def running_worker(broker, threads: int = 8):
    """An in-process worker; on exit it stops and leaves no middleware behind on the broker."""
    w = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=100)
    w.start()
    try:
        yield w
    finally:
        w.stop()
        broker.middleware[:] = [m for m in broker.middleware if getattr(m, "worker", None) is not w]


@pytest.fixture
def queue_worker(queue_broker):
    """An in-process worker (8 threads) consuming the analysis and maintenance queues."""
    with running_worker(queue_broker) as w:
        yield w


def worker_settings():
    """The in-process worker's settings (actors/config.py): what its actors hand down."""
    from actors import config

    return config.current()


def configure_worker(*, queue: dict | None = None, pipeline: dict | None = None):
    """Change some of the in-process worker's settings for this test (tests/conftest.py
    reads them from the environment again after every test)."""
    from actors import config

    return config.configure(config.current().but(queue=queue, pipeline=pipeline))


def reread_worker_settings():
    """Read the in-process worker's settings from the environment again, after the test changed
    the environment (as a worker process started with those variables would)."""
    from actors import config

    return config.configure()


@pytest.fixture
def hooked(conn):
    """Work and release check steered through the database (tests/e2e/hooks.py)."""
    hooks.install(conn)
    configure_worker(queue={"analyze_work": hooks.WORK, "release_check": hooks.RELEASE_CHECK})
    return conn


def open_account(conn, user_id: int, credits: int = 10) -> None:
    query(conn, "INSERT INTO accounts (user_id, credits) VALUES (%s, %s)", user_id, credits)
    if credits:
        query(conn, "INSERT INTO credit_ledger (user_id, kind, amount) VALUES (%s, 'grant', %s)", user_id, credits)


def add_documents(conn, user_id: int, sources: int = 2, *, status: str = "parsed",
                  dois: list | None = None) -> tuple[int, list[int]]:
    """A thesis and ``sources`` source documents of the user: (thesis_id, source_ids)."""
    thesis = query(conn, "INSERT INTO documents (user_id, kind, filename, status) "
                         "VALUES (%s, 'thesis', 'thesis.pdf', %s) RETURNING id", user_id, status)[0][0]
    dois = dois or [f"10.1234/src.{i}" for i in range(sources)]
    ids = [query(conn, "INSERT INTO documents (user_id, kind, filename, status, doi) "
                       "VALUES (%s, 'source', %s, %s, %s) RETURNING id",
                 user_id, f"source{i}.pdf", status, dois[i])[0][0] for i in range(sources)]
    return thesis, ids


def given_user(conn, user_id: int, credits: int = 10) -> tuple[int, list[int]]:
    """An account with credits and parsed documents: (thesis_id, source_ids)."""
    open_account(conn, user_id, credits)
    return add_documents(conn, user_id)


def statuses(conn, user_id: int) -> list[tuple[int, str]]:
    return [(r[0], r[1]) for r in query(conn, "SELECT id, status::text FROM analysis_jobs "
                                              "WHERE user_id = %s ORDER BY id", user_id)]


def balance(conn, user_id: int) -> int:
    return query(conn, "SELECT credits FROM accounts WHERE user_id = %s", user_id)[0][0]


def runs(conn, user_id: int | None = None) -> list[tuple[int, float, float]]:
    """(job_id, first start, finish) of every finished first-pass job, from the event audit.
    A job restarted after a crash spans from its first start: the widest, strictest span."""
    return query(conn, """
        SELECT e.job_id,
               extract(epoch FROM min(e.at) FILTER (WHERE e.event = 'started'))::float8,
               extract(epoch FROM min(e.at) FILTER (WHERE e.event IN ('succeeded', 'failed')))::float8
        FROM analysis_job_events e JOIN analysis_jobs j ON j.id = e.job_id
        WHERE j.delta_of_job_id IS NULL AND (%s::bigint IS NULL OR j.user_id = %s)
        GROUP BY e.job_id
        HAVING bool_or(e.event = 'started') AND bool_or(e.event IN ('succeeded', 'failed'))
        ORDER BY 2""", user_id, user_id)


def assert_no_overlap(conn, user_id: int) -> None:
    """No two first-pass runs of the user overlap (from recorded start and finish times)."""
    spans = sorted((s, f, j) for j, s, f in runs(conn, user_id))
    for (s1, f1, j1), (s2, f2, j2) in zip(spans, spans[1:]):
        assert f1 <= s2, f"jobs {j1} and {j2} of user {user_id} overlap"


# -- the pipeline -------------------------------------------------------------------------

SAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "sample_data"
BAD_PDFS = SAMPLES.parent / "tests" / "data"
SOURCE_FILES = ("okafor_lindqvist_2019.pdf", "hartmann_2020_feedback.pdf", "mueller_2021_spaced_homework.txt",
                "castillo_2018_green_roofs.pdf", "nakamura_heat_notes.txt")
THESES = ("thesis_retrieval_practice.pdf", "thesis_urban_heat.pdf")


def sample_files(*names: str, kind: str = "source") -> list:
    """Sample files as uploads."""
    from analysis.pipeline.intake.uploads import UploadFile

    return [UploadFile(filename=n, data=(SAMPLES / n).read_bytes(), kind=kind) for n in names]


def corpus_upload(theses=THESES, sources=SOURCE_FILES) -> list:
    """The sample corpus as one upload: the theses and every source."""
    return sample_files(*theses, kind="thesis") + sample_files(*sources)


def parse_done(conn, parse_job_id: int) -> str | None:
    """The parse job's status once terminal, else None."""
    status = query(conn, "SELECT status::text FROM parse_jobs WHERE id = %s", parse_job_id)[0][0]
    return status if status in ("succeeded", "partial", "failed") else None


def documents_by_name(conn, session_id: int) -> dict[str, int]:
    return dict(query(conn, "SELECT filename, id FROM documents WHERE session_id = %s", session_id))


def verdicts(conn, job_id: int) -> list[tuple]:
    """(ordinal, marker, claim, source filename, verdict, evidence page) of a job's citations."""
    return query(conn, """
        SELECT c.ordinal, c.marker, c.claim, d.filename, c.verdict::text, c.evidence_page
        FROM job_citations c LEFT JOIN documents d ON d.id = c.source_document_id
        WHERE c.job_id = %s ORDER BY c.ordinal""", job_id)


def job_status(conn, job_id: int) -> str:
    return query(conn, "SELECT status::text FROM analysis_jobs WHERE id = %s", job_id)[0][0]


@pytest.fixture
def run(queue_broker, capsys):
    """Run ``citeq ARGS``: (exit status, parsed --json output or text, stderr)."""

    def run(*argv: str):
        capsys.readouterr()
        status = cli.main(list(argv))
        out, err = capsys.readouterr()
        if "--json" in argv and out.strip():
            out = json.loads(out)
        return status, out, err

    return run
