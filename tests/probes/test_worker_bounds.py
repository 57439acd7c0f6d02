"""Probes of the worker's bounds and typed answers (issue 29) with real `dramatiq actors`
worker processes on the real pipeline: a thesis of one-line citations is extracted whole, a
thesis without citations succeeds, a 50 MB one-line text is refused typed at bounded worker
memory, AES PDFs parse or are ``encrypted_document``, a provider answering 500 ends the job
``provider_unavailable`` with a refund, and CLI arguments out of range are usage errors.
Every wait polls a condition with a deadline."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from pypdf import PdfReader, PdfWriter

from analysis.pipeline.intake import uploads
from analysis.pipeline.intake.uploads import UploadFile
from analysis.queue import userqueue
from analysis.settings import PipelineSettings, QueueSettings
from tests.conftest import query
from tests.fakes.openai_server import FakeChatServer
from tests.integration.conftest import SAMPLES, documents_by_name, job_status, open_account, parse_done, wait_for

pytestmark = pytest.mark.e2e

SOURCE = SAMPLES / "mueller_2021_spaced_homework.txt"


@pytest.fixture
def pipeline_processes(processes):
    """Worker processes running the real pipeline with the offline judge."""
    processes.env.pop("CITEQ_ANALYZE_WORK")
    processes.env["CITEQ_JUDGE"] = "offline"
    return processes


def parsed(conn, user_id: int, files: list[UploadFile], **caps) -> tuple[str, dict[str, int], int]:
    """Stage ``files`` and wait for their parse job: (status, documents by name, parse job id)."""
    settings = PipelineSettings.from_env(**caps)
    staged = uploads.stage_upload(user_id, files, settings=settings)
    status = wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=120, interval=0.1, message="parsed")
    return status, documents_by_name(conn, staged.session_id), staged.parse_job_id


def thesis_of(n: int) -> bytes:
    lines = ["# Homework schedules", "", "## Findings", ""]
    lines += [f"Spacing homework improved final test scores by {i % 50 + 1} percent in class {i} (Müller, 2021)."
              for i in range(n)]
    lines += ["", "## References", "", "Müller, H. (2021). Spaced or blocked? Homework schedules and long-term "
              "learning in lower secondary mathematics. Working paper.", ""]
    return "\n".join(lines).encode()


def analysed(conn, user_id: int, thesis: bytes, deadline: float = 240) -> int:
    """The thesis and the source parsed and analysed to the end: the job id. ``deadline``: how
    long the test waits for the end before it fails (a safety net, not a measurement: the
    benchmarks under scripts/ time it)."""
    status, docs, _ = parsed(conn, user_id, [UploadFile(filename="thesis.md", data=thesis, kind="thesis"),
                                             UploadFile(filename=SOURCE.name, data=SOURCE.read_bytes(),
                                                        kind="source")])
    assert status == "succeeded"
    job_id = userqueue.admit(user_id, docs["thesis.md"], [docs[SOURCE.name]], settings=QueueSettings()).job_id
    wait_for(lambda: job_status(conn, job_id) in ("succeeded", "failed"), timeout=deadline, interval=0.2,
             message="analysis ended")
    return job_id


@pytest.mark.timeout(900)
def test_a_thesis_of_4000_one_line_citations_is_extracted_whole_and_judged(pipeline_processes, conn):
    pipeline_processes.worker()
    open_account(conn, 1)

    # 4,000 claims embedded by the bundled embedder on a loaded CI machine: allow ten minutes.
    job_id = analysed(conn, 1, thesis_of(4000), deadline=600)

    assert query(conn, "SELECT status::text, citations_total, pending_citations FROM analysis_jobs WHERE id = %s",
                 job_id) == [("succeeded", 4000, 0)]
    assert query(conn, "SELECT count(DISTINCT claim), min(ordinal), max(ordinal), count(*) FILTER "
                       "(WHERE source_document_id IS NULL) FROM job_citations WHERE job_id = %s",
                 job_id) == [(4000, 0, 3999, 0)]


def test_a_thesis_without_citations_succeeds_on_a_real_worker(pipeline_processes, conn):
    pipeline_processes.worker()
    open_account(conn, 1)

    job_id = analysed(conn, 1, b"# Notes\n\nNobody is cited in this thesis. It ends here.\n")

    assert query(conn, "SELECT status::text, citations_total, failure_reason FROM analysis_jobs WHERE id = %s",
                 job_id) == [("succeeded", 0, None)]


def test_a_50_mb_one_line_text_is_refused_typed_at_bounded_worker_memory(pipeline_processes, conn):
    root = pipeline_processes.worker()
    open_account(conn, 1)
    word = b"spacing homework improves recall "
    data = (word * (50 * 2**20 // len(word) + 1))[:50 * 2**20]
    peak = [0]
    done = threading.Event()

    def sample() -> None:  # the worker process itself: the sandbox's fork server is counted apart
        while not done.wait(0.02):
            try:
                kids = [p for p in psutil.Process(root.pid).children()
                        if "forkserver" not in " ".join(p.cmdline())]
                peak[0] = max([peak[0], *(p.memory_info().rss for p in kids)])
            except psutil.Error:
                pass

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        status, _, job = parsed(conn, 1, [UploadFile(filename="big.txt", data=data, kind="source")],
                                max_file_bytes=len(data), max_staged_bytes=10**9)
    finally:
        done.set()
        sampler.join()

    assert status == "failed"
    assert query(conn, "SELECT error_code FROM parse_items WHERE job_id = %s", job) == [("document_too_long",)]
    assert 0 < peak[0] <= 400 * 2**20, f"worker peak RSS {peak[0] / 2**20:.0f} MB"


def aes(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(SAMPLES / "okafor_lindqvist_2019.pdf"))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_aes_pdfs_parse_or_are_encrypted_document(pipeline_processes, conn):
    pipeline_processes.worker()
    open_account(conn, 1)

    status, docs, job = parsed(conn, 1, [UploadFile(filename="open.pdf", data=aes(""), kind="source"),
                                         UploadFile(filename="locked.pdf", data=aes("secret"), kind="source")])

    assert status == "partial" and "open.pdf" in docs
    assert query(conn, "SELECT filename, status::text, coalesce(error_code, '') FROM parse_items WHERE job_id = %s "
                       "ORDER BY ordinal", job) == [("open.pdf", "parsed", ""),
                                                    ("locked.pdf", "failed", "encrypted_document")]
    assert query(conn, "SELECT count(*) FROM chunks WHERE document_id = %s", docs["open.pdf"])[0][0] > 0


def test_a_provider_answering_500_ends_the_job_provider_unavailable_refunded(processes, conn):
    with FakeChatServer() as provider:
        provider.mode = "server_error"
        processes.env.pop("CITEQ_ANALYZE_WORK")
        processes.env.update(CITEQ_JUDGE="openai", CITEQ_JUDGE_BASE_URL=provider.base_url,
                             CITEQ_JUDGE_MODEL="fake-model", CITEQ_JUDGE_OUTAGE_SECONDS="5")
        processes.worker()
        open_account(conn, 1)

        job_id = analysed(conn, 1, thesis_of(5))

        (status, reason, seconds), = query(conn, "SELECT status::text, failure_reason, extract(epoch FROM "
                                                 "finished_at - extracted_at) FROM analysis_jobs WHERE id = %s", job_id)
        assert status == "failed" and reason.startswith("provider_unavailable:")
        assert query(conn, "SELECT count(*) FROM credit_ledger WHERE job_id = %s AND kind = 'refund'", job_id) == [(1,)]
        assert seconds <= 5 + 60 + 10  # the stated bound: the window, one backoff, a call
        assert query(conn, "SELECT count(*) FROM citeq_messages WHERE state = 'dead'") == [(0,)]


@pytest.mark.parametrize("argv", [["users", "token", "alice", "--ttl-days", v] for v in ("0", "-1", "nan", "inf")])
def test_cli_arguments_out_of_range_are_usage_errors(argv):
    done = subprocess.run([str(Path(sys.executable).parent / "citeq"), *argv], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "argument --ttl-days" in done.stderr and "Traceback" not in done.stderr
