"""The cost of the layout-aware PDF reader against pypdf's plain text extraction.

    .venv/bin/python scripts/bench_readers.py [--rounds 8]

Both paths read the sample PDFs and cut them into passages; rounds alternate between the
two, so a busy machine slows both alike, and the figure is the ratio of their times per
round (above 1: the reader is slower). It prints the ratios, not a verdict.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline.retrieval.chunking import split_passages  # noqa: E402
from analysis.pipeline.documents.document import Page, normalize_text  # noqa: E402
from analysis.pipeline.documents.pdftext import open_pdf  # noqa: E402
from analysis.pipeline.documents.readers import extract_pages  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    data = [(p.name, p.read_bytes()) for p in sorted((ROOT / "sample_data").glob("*.pdf"))]

    def plain() -> None:
        for name, raw in data:
            reader = open_pdf(raw, name)
            pages = [Page(number=i + 1, text=normalize_text(page.extract_text() or ""))
                     for i, page in enumerate(reader.pages)]
            split_passages(pages)

    def layout() -> None:
        for name, raw in data:
            split_passages(extract_pages(raw, name))

    plain(), layout()  # imports and caches warm
    ratios = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _ in range(3):
            plain()
        middle = time.perf_counter()
        for _ in range(3):
            layout()
        ratios.append((time.perf_counter() - middle) / (middle - start))
    print("layout reader / plain extraction, time per round:", " ".join(f"{r:.2f}" for r in ratios))
    print(f"median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    main()
