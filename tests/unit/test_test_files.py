"""The test folders have no ``__init__.py`` (pytest's rootdir-relative imports), so two test
files with one name in two folders stop the whole run at collection: caught here, by name."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            by_name[path.name].append(str(path.relative_to(TESTS)))
    assert {n: p for n, p in by_name.items() if len(p) > 1} == {}
