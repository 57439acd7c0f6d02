"""The fault-injection suite's fixtures: real worker and scheduler processes (the e2e
ones) on the real pipeline, judging through the slow loopback provider; the tally is
printed at the end of the run."""

from __future__ import annotations

import psycopg2
import pytest

from tests.e2e.conftest import processes  # noqa: F401 - the e2e processes fixture
from tests.faults import harness


@pytest.fixture
def provider():
    with harness.SlowProvider() as slow:
        yield slow


@pytest.fixture
def faulty(processes, provider, conn, db):  # noqa: F811 - the fixture imported above
    """Processes running the real pipeline against the slow provider, with every verdict
    write logged (to find one written twice)."""
    processes.env.pop("CITEQ_ANALYZE_WORK")
    processes.env.update(provider.env(), CITEQ_RESEND_GRACE_SECONDS="5")
    harness.install_verdict_log(conn)
    yield processes
    processes.stop_all()
    fresh = psycopg2.connect(db)  # the test's own connection may not have survived its fault
    fresh.autocommit = True
    try:
        harness.remove_verdict_log(fresh)
    finally:
        fresh.close()


def pytest_terminal_summary(terminalreporter):
    if harness.TALLY.cases:
        terminalreporter.write_line(harness.TALLY.line())
