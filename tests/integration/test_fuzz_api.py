"""Property-based fuzzing of the whole HTTP API from its OpenAPI document (schemathesis).

The real app on the real test database, in process (ASGI), with a token that is a user's
and an operator's, so every route is reached past authentication. Every answer must be
no 5xx and match the document: status code, content type, headers and body schema.

Size: ``CITEQ_FUZZ_EXAMPLES`` examples per operation and phase (default 10 in ``make
test``); ``CITEQ_FUZZ_LONG=1`` runs 300 (docs/howto/testing.md, "Fuzzing", has the command).

Deliberate exclusions (also in docs/howto/testing.md, "Fuzzing"):

- ``positive_data_acceptance``: schemathesis validates what it generated with an f64
  JSON-schema validator, so an id just past the documented maximum 2**63 - 1 (for example
  9223372036854775999) passes as schema-valid there, and the API's correct 422 is reported
  as "valid data rejected". Every other check runs, including that invalid data is refused.
- The dashboard, its static files and /docs are not in the document
  (include_in_schema=False) and are covered by their own tests.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from analysis.surface import accounts
from web.app import create_app
from web.settings import WebSettings

EXCLUDED = [schemathesis.checks.positive_data_acceptance]
EXAMPLES = 300 if os.environ.get("CITEQ_FUZZ_LONG") else int(os.environ.get("CITEQ_FUZZ_EXAMPLES", "10"))


class _CurrentApp:
    """The ASGI app the cases are sent to: the real one of the running test (set by ``web_app``).
    The schema itself is read at import from an app that is never called."""

    app = None

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)


CURRENT = _CurrentApp()
schema = schemathesis.openapi.from_dict(create_app(broker=object(), settings=WebSettings()).openapi())
schema.app = CURRENT


@pytest.fixture
def web_app(queue_broker):
    settings = WebSettings(admit_limit=100_000, upload_limit=100_000, max_upload_bytes=1 << 20)
    app = create_app(broker=queue_broker, settings=settings)
    user = accounts.create(queue_broker, "fuzz", credits=1_000_000)
    app.state.fuzz_token = accounts.mint_token(queue_broker, user, operator=True)
    CURRENT.app = app
    yield app
    CURRENT.app = None


@schema.parametrize()
# The CI size runs the same examples every time (a red CI names a bug, not a lucky draw);
# the long run explores anew on every run.
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=not os.environ.get("CITEQ_FUZZ_LONG"))
def test_the_api_never_answers_5xx_and_matches_its_document(case, web_app):
    case.call_and_validate(headers={"Authorization": f"Bearer {web_app.state.fuzz_token}"},
                           excluded_checks=EXCLUDED)
