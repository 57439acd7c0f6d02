"""Rewrite docs/reference/settings.md from the settings classes (citeq/reference.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from citeq.reference import write  # noqa: E402

if __name__ == "__main__":
    print(write())
