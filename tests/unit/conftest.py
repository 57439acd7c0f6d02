"""Fixtures of the unit tests: the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeChatServer


@pytest.fixture
def server():
    """The fake provider (chat completions and embeddings, the real wire format)."""
    with FakeChatServer() as fake:
        yield fake
