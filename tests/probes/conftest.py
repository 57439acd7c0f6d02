"""The bounds probes of issue 29: each test is one probe of a limit (a real `citeq web`
process or real worker processes on loopback, bounded in count and time). A probe that
passes held; one that fails fell short. The tally is printed at the end of the run."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import processes  # noqa: F401 - real worker processes

PROBES: dict[str, bool] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if "tests/probes/" in item.nodeid.replace("\\", "/") and (report.when == "call" or report.failed):
        PROBES[item.name] = PROBES.get(item.name, True) and report.passed


def pytest_terminal_summary(terminalreporter):
    if PROBES:
        short = [name for name, held in PROBES.items() if not held]
        terminalreporter.write_line(
            f"bounds probes: {len(PROBES)}, held {len(PROBES) - len(short)}, fell short {len(short)}"
            + (f" ({', '.join(short)})" if short else ""))
