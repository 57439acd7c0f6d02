"""The parse sandbox's CPU allowance grows with the document (issue 29): a PDF lowers its
budget to what its pages and bytes need, so a small hostile PDF stops long before the 30 s
ceiling, and nothing outside a sandbox is ever limited. Real child processes, real PDFs."""

from __future__ import annotations

import resource

import pytest

from analysis.pipeline.documents.pdflayout import cpu_allowance
from analysis.pipeline.documents.readers import extract_document
from analysis.pipeline.documents.sandbox import ResourceLimitExceeded, limit_cpu, run_limited
from tests.documents import thesis_pdf
from tests.hostile_pdfs import shared_stream_pdf

CEILING = {"cpu_seconds": 30, "memory_bytes": 512 << 20, "wall_seconds": 300}


def lowered_to(seconds: float) -> tuple[float | None, int]:
    """In the child: what limit_cpu answers, and the soft CPU limit then in force."""
    return limit_cpu(seconds), resource.getrlimit(resource.RLIMIT_CPU)[0]


def test_limit_cpu_lowers_the_budget_in_a_sandbox_but_never_raises_it():
    assert run_limited(lowered_to, 3, **CEILING) == (3.0, 3)
    assert run_limited(lowered_to, 100, **CEILING) == (30.0, 30)


def test_limit_cpu_outside_a_sandbox_changes_nothing():
    before = resource.getrlimit(resource.RLIMIT_CPU)
    assert limit_cpu(1) is None
    assert resource.getrlimit(resource.RLIMIT_CPU) == before


def test_the_allowance_grows_from_a_small_base_with_pages_and_bytes():
    assert cpu_allowance(8, 15_000) < 5 < cpu_allowance(300, 5_000_000)
    assert cpu_allowance(2, 0) < cpu_allowance(20, 0) < cpu_allowance(20, 10_000_000)


def test_a_small_hostile_pdf_stops_at_its_allowance_under_the_full_ceiling():
    with pytest.raises(ResourceLimitExceeded) as stopped:
        run_limited(extract_document, shared_stream_pdf(), "hostile.pdf", **CEILING)
    assert stopped.value.limit == "cpu"


def test_an_honest_pdf_reads_within_its_allowance():
    document = run_limited(extract_document, thesis_pdf(), "thesis.pdf", **CEILING)
    assert len(document.pages) == 2 and document.pages[0].text.strip()
