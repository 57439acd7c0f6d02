"""``tests/common.py`` of Dramatiq's own test suite, written for citeq's run of it.

Dramatiq's sdist ships its test files but not the helpers they import; scripts/dramatiq_suite.py
copies this file next to them as ``common.py``. It defines every name of the repository's
``tests/common.py`` (the script checks that when it runs a checkout's files), without its
import-time connection to RabbitMQ: there is no RabbitMQ here, and no test run needs one.
"""

from __future__ import annotations

import os
import platform
from contextlib import contextmanager

import pytest
from dramatiq import Worker
from dramatiq.threading import is_gevent_active


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

skip_with_gevent = pytest.mark.skipif(is_gevent_active(), reason="Behaviour with gevent is different.")
skip_without_gevent = pytest.mark.skipif(not is_gevent_active(), reason="Behaviour without gevent is different.")

RABBITMQ_USERNAME = os.getenv("RABBITMQ_USERNAME", "guest")
RABBITMQ_PASSWORD = os.getenv("RABBITMQ_PASSWORD", "guest")


def rabbit_mq_is_unreachable():
    """No test of citeq's run talks to RabbitMQ; the tests that would are skipped."""
    return True


skip_unless_rabbit_mq = pytest.mark.skipif(rabbit_mq_is_unreachable(), reason="RabbitMQ is unreachable")

try:  # test_broker.py builds a RabbitmqBroker object (no connection) in one test
    import pika.credentials

    RABBITMQ_CREDENTIALS = pika.credentials.PlainCredentials(RABBITMQ_USERNAME, RABBITMQ_PASSWORD)
except ImportError:  # pragma: no cover - that test is excluded when pika is missing
    RABBITMQ_CREDENTIALS = None
