"""Named SQL queries, loaded once from ``.sql`` files (the procrastinate layout).

A file holds blocks that start with ``-- name --``; the block's text up to the next
header is the query. Parameters are psycopg2's ``%(named)s``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_HEADER = re.compile(r"^-- ([a-z_]+) --$", re.MULTILINE)


def parse_queries(text: str) -> dict[str, str]:
    """Split a queries file into ``{name: sql}``."""
    parts = _HEADER.split(text)
    queries = {}
    for name, body in zip(parts[1::2], parts[2::2]):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        queries[name] = body.strip()
    return queries


@cache
def load(path: Path) -> dict[str, str]:
    return parse_queries(Path(path).read_text(encoding="utf-8"))


def broker_queries() -> dict[str, str]:
    return load(Path(__file__).with_name("queries.sql"))
