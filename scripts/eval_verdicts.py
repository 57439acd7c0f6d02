"""Measure extraction, resolution and verdicts on a labelled corpus, through the real pipeline.

The harness lives in citeq/evaluation/harness.py; this is its command line.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from citeq.evaluation.harness import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
