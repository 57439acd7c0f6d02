"""Security headers on every web response; the API docs without third-party hosts."""

from __future__ import annotations

import re

import pytest
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient

from analysis.surface import accounts
from web.app import create_app
from web.security import HEADERS

EXPECTED = {name.decode(): value.decode() for name, value in HEADERS.items()}


@pytest.fixture
def app(queue_broker):
    return create_app(broker=queue_broker)


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


def has_security_headers(r) -> None:
    for name, value in EXPECTED.items():
        assert r.headers.get(name) == value, (r.request.url, name, r.headers.get(name))
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp


def test_every_kind_of_response_carries_them(client, queue_broker):
    token = accounts.mint_token(queue_broker, accounts.create(queue_broker, "alice"))
    auth = {"Authorization": f"Bearer {token}"}
    for r in [client.get("/"), client.get("/static/dashboard.js"), client.get("/static/dashboard.css"),
              client.get("/healthz"), client.get("/metrics"), client.get("/openapi.json"), client.get("/docs"),
              client.get("/docs/assets/swagger-ui-bundle.js"), client.get("/api/me", headers=auth),
              client.get("/api/me"), client.get("/api/analyses/1", headers=auth),
              client.get("/api/analyses/x", headers=auth), client.get("/nothing"), client.delete("/healthz"),
              client.post("/api/analyses", content=b"{", headers={**auth, "Content-Type": "application/json"})]:
        has_security_headers(r)


def test_a_route_that_sets_its_own_csp_keeps_it(app):
    own = "default-src 'none'; style-src 'unsafe-inline'"

    @app.get("/own-csp")
    def report():
        return HTMLResponse("<style>p{}</style><p>report</p>", headers={"Content-Security-Policy": own})

    with TestClient(app) as client:
        r = client.get("/own-csp")
    assert r.headers["content-security-policy"] == own
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"


def test_the_docs_load_nothing_from_another_host(client):
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not re.search(r"(src|href)=\"(https?:)?//", page.text), page.text
    assert "<script>" not in page.text  # no inline script: CSP script-src 'self' allows the page
    for url in re.findall(r"(?:src|href)=\"(/[^\"]+)\"", page.text):
        r = client.get(url)
        assert r.status_code == 200 and len(r.content) > 100, url
    assert client.get("/docs/assets/../../app.py").status_code == 404
    assert client.get("/redoc").status_code == 404  # FastAPI's CDN-based page is off
