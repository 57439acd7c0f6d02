"""Fixtures of the topology suite (issue 26): a real PgBouncer in front of the test
server; the tally printed at the end of the run."""

from __future__ import annotations

import pytest

from citeq.devdb import with_dbname
from tests.conftest import TEST_DB

from tests.topologies import tally
from tests.topologies.pgbouncer import PgBouncer, PgBouncerUnavailable


@pytest.fixture
def direct_db(db, pg_server) -> str:
    """The clean test database's URL straight to the server (``db`` may be PgBouncer's)."""
    return with_dbname(pg_server[0], TEST_DB)


@pytest.fixture
def pgbouncer(direct_db):
    """start(mode, pool_size=...) -> a running PgBouncer in front of the test database's
    server; stopped after the test. Skips where pgbouncer is not installed."""
    started: list[PgBouncer] = []

    def start(mode: str, **kwargs) -> PgBouncer:
        try:
            bouncer = PgBouncer(direct_db, mode, **kwargs)
        except PgBouncerUnavailable as exc:
            pytest.skip(str(exc))
        started.append(bouncer)
        return bouncer.start()

    yield start
    for bouncer in started:
        bouncer.stop()


def pytest_terminal_summary(terminalreporter):
    for line in tally.lines():
        terminalreporter.write_line(line)
