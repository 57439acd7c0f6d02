"""``tests/common.py`` of Dramatiq's own test suite, written for citeq's run of it.

Dramatiq's sdist ships its test files but not the helpers they import; scripts/dramatiq_suite.py
copies this file next to them as ``common.py``. Only what the broker-generic files import.
"""

from __future__ import annotations

import os
import platform
from contextlib import contextmanager

import pytest
from dramatiq import Worker


@contextmanager
def worker(*args, **kwargs):
    """A started Dramatiq worker, stopped on exit."""
    w = Worker(*args, **kwargs)
    w.start()
    try:
        yield w
    finally:
        w.stop()


# Dramatiq skips a few timing-heavy tests on its own CI services; citeq's CI is not one of
# them, so these tests run here.
skip_in_ci = pytest.mark.skipif(
    os.getenv("APPVEYOR") is not None or os.getenv("GITHUB_ACTION") is not None, reason="test skipped in CI")
skip_on_windows = pytest.mark.skipif(platform.system() == "Windows", reason="test skipped on Windows")
skip_on_pypy = pytest.mark.skipif(platform.python_implementation() == "PyPy",
                                  reason="Time limits are not supported under PyPy.")

try:  # test_broker.py builds a RabbitmqBroker object (no connection) in one test
    import pika.credentials

    RABBITMQ_CREDENTIALS = pika.credentials.PlainCredentials("guest", "guest")
except ImportError:  # pragma: no cover - that test is excluded when pika is missing
    RABBITMQ_CREDENTIALS = None
