"""The parse sandbox: a child process under CPU, memory and wall-clock budgets, and the
control characters taken out of whatever a reader returns."""

from __future__ import annotations

import os
import time

import pytest

from analysis.pipeline.documents.cleantext import clean, clean_tree
from analysis.pipeline.documents.pdftext import MalformedDocument, Page
from analysis.pipeline.documents.readers import extract_pages
from analysis.pipeline.documents.sandbox import ResourceLimitExceeded, run_limited
from tests.hostile_pdfs import shared_stream_pdf, text_pdf

BUDGET = {"cpu_seconds": 1, "memory_bytes": 512 << 20, "wall_seconds": 30}


def spin() -> None:
    while True:
        pass


def hoard() -> bytes:
    return b"x" * (2 << 30)


def doze() -> None:
    time.sleep(60)


def pid() -> int:
    return os.getpid()


def test_the_result_comes_back_from_a_child_process():
    pages = run_limited(extract_pages, text_pdf(b"Green roofs cool cities."), "a.pdf", **BUDGET)

    assert pages == [Page(number=1, text="Green roofs cool cities.")]
    assert run_limited(pid, **BUDGET) != os.getpid()


def test_the_functions_own_error_is_raised_in_the_caller():
    with pytest.raises(MalformedDocument, match="not a PDF"):
        run_limited(extract_pages, b"hello", "a.pdf", **BUDGET)


def test_cpu_memory_and_wall_budgets_each_stop_the_child():
    with pytest.raises(ResourceLimitExceeded) as cpu:
        run_limited(spin, **BUDGET)
    with pytest.raises(ResourceLimitExceeded) as memory:
        run_limited(hoard, **BUDGET)
    with pytest.raises(ResourceLimitExceeded) as wall:
        run_limited(doze, **{**BUDGET, "wall_seconds": 0.5})

    assert (cpu.value.limit, memory.value.limit, wall.value.limit) == ("cpu", "memory", "wall")


def test_a_pdf_whose_pages_share_one_huge_content_stream_is_stopped_by_the_cpu_budget():
    data = shared_stream_pdf()
    assert len(data) < 20_000  # small on disk; seconds of CPU per page to read

    with pytest.raises(ResourceLimitExceeded) as stopped:
        run_limited(extract_pages, data, "hostile.pdf", **BUDGET)

    assert stopped.value.limit == "cpu"


def test_control_characters_and_lone_surrogates_go_newlines_and_tabs_stay():
    assert clean("a\x00b\x07c\x1b[0m\td\ne\r\nf\x7f\ud800g") == "abc[0m\td\ne\nfg"
    assert clean("Grünflächen — “quoted” 2 °C") == "Grünflächen — “quoted” 2 °C"


def test_every_string_of_a_readers_result_is_cleaned_whatever_its_shape():
    pages = [Page(number=1, text="a\x00b"), Page(number=2, text="c")]

    assert clean_tree(pages) == [Page(number=1, text="ab"), Page(number=2, text="c")]
    assert clean_tree({"k\x00": ("x\x01", 3, ["\x02y"])}) == {"k": ("x", 3, ["y"])}
