"""What the named queries set for themselves, read from their text (no server needed)."""

from __future__ import annotations

import re

import pytest

from analysis import db
from broker import sql

DISABLES = re.compile(r"^SET LOCAL enable_\w+ = off;$", re.MULTILINE)
ALL = {**sql.broker_queries(), **db.QUERIES}


def test_the_namespaces_hold_the_statements_that_turn_plan_types_off():
    assert sum(bool(DISABLES.search(q)) for q in ALL.values()) >= 5


@pytest.mark.parametrize("name", sorted(n for n, q in ALL.items() if DISABLES.search(q)))
def test_a_statement_that_turns_a_plan_type_off_turns_jit_off_too(name):
    # Before PostgreSQL 18 a disabled node the plan still needs adds 1e10 to its cost, past
    # every jit_*_above_cost: on a server built with LLVM the statement was compiled on every
    # execution (400-500 ms per claim on PostgreSQL 15; broker/queries.sql says more).
    assert re.search(r"^SET LOCAL jit = off;$", ALL[name], re.MULTILINE), name
