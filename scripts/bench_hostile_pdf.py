"""How long the parse sandbox takes to stop a hostile PDF, and to read honest ones (issue 29).

    .venv/bin/python scripts/bench_hostile_pdf.py

The hostile file is tests/hostile_pdfs.py's shared-stream PDF (about 15 kB, 8 pages drawing
one huge compressed content stream; issue 26's 18.5 kB file took 30-32 s of the 30 s CPU
budget). Each file is read by ``extract_document_within`` in the real sandbox with the
default budgets (CITEQ_PARSE_CPU_SECONDS and friends); printed: wall seconds to the answer,
the answer, and the CPU allowance the file was given (its pages and bytes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    from analysis.pipeline.documents.pdflayout import cpu_allowance
    from analysis.pipeline.documents.readers import extract_document_within
    from analysis.pipeline.documents.sandbox import SandboxError, run_limited
    from analysis.pipeline.intake.parsing import _budget
    from analysis.settings import PipelineSettings
    from tests.documents import thesis_pdf
    from tests.hostile_pdfs import shared_stream_pdf

    settings = PipelineSettings.from_env()
    files = [("shared-stream.pdf (hostile)", shared_stream_pdf(), 8),
             ("thesis_pdf() (tests/documents.py)", thesis_pdf(), None),
             *[(p.name, p.read_bytes(), None) for p in sorted((ROOT / "sample_data").glob("*.pdf"))]]
    print(f"budget: {settings.parse_cpu_seconds:g} s CPU at most, {settings.parse_wall_seconds:g} s wall", flush=True)
    for name, data, pages in files:
        start = time.perf_counter()
        try:
            document = run_limited(extract_document_within, data, name, settings.parse_max_text_chars,
                                   **_budget(settings))
            pages = len(document.pages)
            answer = f"read, {pages} pages"
        except SandboxError as exc:
            answer = f"stopped: {exc}"
        elapsed = time.perf_counter() - start
        allowance = f"{cpu_allowance(pages, len(data)):.1f} s" if pages else "?"
        print(f"{name}: {len(data) / 1000:.1f} kB, {elapsed:.2f} s wall, {answer} (CPU allowance {allowance})",
              flush=True)


if __name__ == "__main__":
    main()
