"""The HTTP API against the real test database (Starlette's TestClient, no network)."""

from __future__ import annotations

import importlib.util

import pytest
from fastapi.testclient import TestClient

from analysis.surface import accounts
from tests.conftest import ROOT, query
from tests.integration.conftest import add_documents
from web.app import create_app
from web.settings import WebSettings

HAS_UPLOADS = importlib.util.find_spec("analysis.pipeline.intake.uploads") is not None


@pytest.fixture
def settings():
    return WebSettings(admit_limit=10, upload_limit=5, window_seconds=60, max_json_bytes=2048,
                       max_upload_bytes=64 * 1024)


@pytest.fixture
def client(queue_broker, settings):
    with TestClient(create_app(broker=queue_broker, settings=settings)) as c:
        yield c


class User:
    def __init__(self, broker, conn, name: str, credits: int = 10) -> None:
        self.id = accounts.create(broker, name, credits=credits)
        self.token = accounts.mint_token(broker, self.id)
        self.auth = {"Authorization": f"Bearer {self.token}"}
        self.thesis, self.sources = add_documents(conn, self.id)

    def analysis(self, **extra) -> dict:
        return {"thesis_id": self.thesis, "source_ids": self.sources, **extra}


@pytest.fixture
def alice(queue_broker, conn):
    return User(queue_broker, conn, "alice")


@pytest.fixture
def bob(queue_broker, conn):
    return User(queue_broker, conn, "bob")


@pytest.fixture
def ops(queue_broker):
    return {"Authorization": f"Bearer {accounts.mint_token(queue_broker, None, operator=True)}"}


def jobs_in_db(conn) -> int:
    return query(conn, "SELECT count(*) FROM analysis_jobs")[0][0]


# -- auth --------------------------------------------------------------------------------------

USER_ROUTES = [("get", "/api/me"), ("get", "/api/documents"), ("get", "/api/analyses"),
               ("post", "/api/analyses"), ("get", "/api/analyses/1"), ("post", "/api/analyses/1/cancel"),
               ("post", "/api/analyses/1/delta"), ("post", "/api/uploads"), ("get", "/api/uploads/1")]
OPS_ROUTES = [("get", "/api/ops/queues"), ("get", "/api/ops/workers"), ("get", "/api/ops/dead-letters"),
              ("post", "/api/ops/dead-letters/1/retry"), ("delete", "/api/ops/dead-letters/1"),
              ("get", "/api/ops/analyses"), ("get", "/api/ops/overview"), ("post", "/api/ops/queues/default/pause"),
              ("post", "/api/ops/queues/default/resume"), ("post", "/api/ops/dead-letters/retry"),
              ("delete", "/api/ops/dead-letters"), ("get", "/api/ops/groups"), ("get", "/api/ops/groups/keys"),
              ("get", "/api/ops/groups/default/messages?key=a")]


@pytest.mark.parametrize("method,path", USER_ROUTES + OPS_ROUTES)
def test_no_or_a_wrong_token_is_401(client, method, path):
    for headers in [{}, {"Authorization": "Bearer cq_nope"}, {"Authorization": "Basic abc"}]:
        r = client.request(method, path, headers=headers)
        assert r.status_code == 401, r.text
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("method,path", OPS_ROUTES)
def test_a_user_token_cannot_reach_operator_routes(client, alice, method, path):
    r = client.request(method, path, headers=alice.auth)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"


def test_a_foreign_token_gets_404_and_no_data_on_every_route_with_an_id(client, alice, bob, conn):
    job = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    queued = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    for method, path in [("get", f"/api/analyses/{job['id']}"), ("post", f"/api/analyses/{queued['id']}/cancel"),
                         ("post", f"/api/analyses/{job['id']}/delta")]:
        r = client.request(method, path, headers=bob.auth)
        assert r.status_code == 404, (path, r.text)
        assert set(r.json()) == {"error"} and r.json()["error"]["code"] == "unknown_job"
        assert "thesis.pdf" not in r.text
    # Bob's own listings show nothing of Alice's; admitting with her documents is "not found".
    assert client.get("/api/analyses", headers=bob.auth).json() == []
    assert {d["id"] for d in client.get("/api/documents", headers=bob.auth).json()} == {bob.thesis, *bob.sources}
    r = client.post("/api/analyses", json=alice.analysis(), headers=bob.auth)
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_document"
    assert query(conn, "SELECT status::text FROM analysis_jobs WHERE id = %s", queued["id"])[0][0] == "queued"


@pytest.mark.skipif(not HAS_UPLOADS, reason="the parsing pipeline (analysis.pipeline.intake.uploads) is not installed")
def test_a_foreign_token_gets_404_for_an_upload(client, alice, bob):
    r = client.post("/api/uploads", files=[("files", ("thesis_a.pdf", b"%PDF-1.4 x", "application/pdf"))],
                    headers=alice.auth)
    assert r.status_code == 202, r.text
    job_id = r.json()["jobId"]
    assert client.get(f"/api/uploads/{job_id}", headers=alice.auth).status_code == 200
    r = client.get(f"/api/uploads/{job_id}", headers=bob.auth)
    assert r.status_code == 404 and "thesis_a" not in r.text


def test_an_operator_token_without_a_user_has_no_user_routes(client, ops):
    r = client.get("/api/me", headers=ops)
    assert r.status_code == 403 and r.json()["error"]["code"] == "no_user"


# -- analyses ----------------------------------------------------------------------------------


def test_admit_pending_then_queued_with_positions_and_me(client, alice):
    first = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth)
    assert first.status_code == 201 and first.json()["status"] == "pending"
    assert first.headers["location"] == f"/api/analyses/{first.json()['id']}"
    second = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    third = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    assert (second["status"], second["position"], third["position"]) == ("queued", 1, 2)

    listed = client.get("/api/analyses", headers=alice.auth).json()
    assert [(j["id"], j["position"]) for j in listed] == [(third["id"], 2), (second["id"], 1),
                                                          (first.json()["id"], None)]
    me = client.get("/api/me", headers=alice.auth).json()
    assert me["credits"] == 7 and me["jobs"] == {"pending": 1, "queued": 2}


def test_get_one_job_with_verdicts_and_unknown_ids(client, alice):
    job = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    r = client.get(f"/api/analyses/{job['id']}", headers=alice.auth)
    assert r.status_code == 200
    body = r.json()
    for field in ["id", "user_id", "status", "position", "delta_of", "created_at", "started_at", "finished_at",
                  "error", "verdicts"]:
        assert field in body
    assert body["created_at"].endswith("Z")
    assert client.get("/api/analyses/999999", headers=alice.auth).status_code == 404
    r = client.get("/api/analyses/not-a-number", headers=alice.auth)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert client.get("/api/nothing-here", headers=alice.auth).json()["error"]["code"] == "not_found"


def test_idempotency_key_returns_the_original_with_200(client, alice, conn):
    first = client.post("/api/analyses", json=alice.analysis(idempotency_key="k"), headers=alice.auth)
    again = client.post("/api/analyses", json=alice.analysis(idempotency_key="k"), headers=alice.auth)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"] and jobs_in_db(conn) == 1


def test_admission_errors_map_to_precise_statuses(client, alice, conn, monkeypatch):
    def refused(body, status, code):
        r = client.post("/api/analyses", json=body, headers=alice.auth)
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text
        return r

    refused(alice.analysis(options={"x": "y" * 20_000}), 413, "payload_too_large")  # body over max_json_bytes
    state = client.app.state  # the settings the app read once, at its start; changed for a moment
    state.queue_settings = (read := state.queue_settings).model_copy(update={"max_options_bytes": 10})
    refused(alice.analysis(options={"x": "y" * 100}), 413, "payload_too_large")
    state.queue_settings = read
    refused({"thesis_id": alice.thesis, "source_ids": []}, 422, "invalid_request")
    query(conn, "UPDATE documents SET doi = 'not-a-doi' WHERE id = %s", alice.sources[0])
    refused(alice.analysis(), 422, "invalid_doi")
    query(conn, "UPDATE documents SET doi = NULL, status = 'parsing' WHERE id = %s", alice.sources[0])
    refused(alice.analysis(), 409, "document_not_ready")
    query(conn, "UPDATE documents SET status = 'parsed' WHERE id = %s", alice.sources[0])
    query(conn, "INSERT INTO provider_daily_budget (provider, day, call_limit, calls_used) "
                "VALUES ('offline', (now() AT TIME ZONE 'utc')::date, 1, 1)")
    r = refused(alice.analysis(), 503, "budget_exhausted")
    assert int(r.headers["retry-after"]) > 0
    query(conn, "DELETE FROM provider_daily_budget")
    state.queue_settings = read.model_copy(update={"max_active_jobs": 1})
    assert client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).status_code == 201
    refused(alice.analysis(), 409, "queue_full")
    state.queue_settings = read
    query(conn, "UPDATE accounts SET credits = 0 WHERE user_id = %s", alice.id)
    refused(alice.analysis(), 402, "insufficient_credits")
    assert jobs_in_db(conn) == 1


def test_malformed_bodies_get_clear_4xx_and_write_nothing(client, alice, conn):
    post = lambda **kw: client.post("/api/analyses", headers={**alice.auth, **kw.pop("headers", {})}, **kw)  # noqa: E731
    r = post(content=b"{not json", headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "malformed_json")
    r = post(content=b"thesis_id=1", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert (r.status_code, r.json()["error"]["code"]) == (415, "unsupported_media_type")
    r = post(content=b'{"thesis_id": "x", "source_ids": [1]}', headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()["error"]["code"]) == (422, "invalid_request")
    assert r.json()["error"]["errors"][0]["loc"] == ["thesis_id"]
    r = post(content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    r = post(content=b"{}" + b" " * 5000, headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()["error"]["code"]) == (413, "payload_too_large")
    assert jobs_in_db(conn) == 0 and query(conn, "SELECT credits FROM accounts WHERE user_id = %s", alice.id)[0][0] == 10


def test_cancel_and_delta(client, alice, conn):
    first = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    second = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()
    r = client.post(f"/api/analyses/{second['id']}/cancel", headers=alice.auth)
    assert r.status_code == 200 and r.json()["status"] == "canceled"
    r = client.post(f"/api/analyses/{second['id']}/cancel", headers=alice.auth)
    assert (r.status_code, r.json()["error"]["code"]) == (409, "not_cancelable")
    assert client.post("/api/analyses/999999/cancel", headers=alice.auth).status_code == 404

    r = client.post(f"/api/analyses/{first['id']}/delta", headers=alice.auth)
    assert r.status_code == 201, r.text
    assert (r.json()["status"], r.json()["delta_of"]) == ("pending", first["id"])  # bypasses the queue
    r = client.post(f"/api/analyses/{first['id']}/delta", json={"source_ids": [alice.sources[0]]}, headers=alice.auth)
    assert r.status_code == 201 and r.json()["source_ids"] == [alice.sources[0]]
    r = client.post(f"/api/analyses/{first['id']}/delta", content=b"{", headers={
        **alice.auth, "Content-Type": "application/json"})
    assert r.status_code == 400


# -- request limits ----------------------------------------------------------------------------


def test_five_back_to_back_admits_queue_and_the_window_then_answers_429(client, alice, queue_broker, settings):
    statuses = [client.post("/api/analyses", json=alice.analysis(), headers=alice.auth).json()["status"]
                for _ in range(5)]
    assert statuses == ["pending", "queued", "queued", "queued", "queued"]
    # A second web process shares the window: it lives in Postgres.
    with TestClient(create_app(broker=queue_broker, settings=settings)) as other:
        codes = [other.post("/api/analyses/1/delta", headers=alice.auth).status_code for _ in range(5)]
    assert codes == [201] * 5
    r = client.post("/api/analyses", json=alice.analysis(), headers=alice.auth)
    assert (r.status_code, r.json()["error"]["code"]) == (429, "rate_limited")
    assert 1 <= int(r.headers["retry-after"]) <= 60


def test_the_window_slides(queue_broker, alice):
    from datetime import datetime, timedelta, timezone

    from analysis.surface import ratelimits

    t0 = datetime(2030, 1, 1, tzinfo=timezone.utc)
    hit = lambda s: ratelimits.hit(queue_broker, alice.id, "admit", limit=2, window_seconds=10,  # noqa: E731
                                  now=t0 + timedelta(seconds=s))
    assert hit(0).allowed and hit(4).allowed
    refused = hit(5)
    assert not refused.allowed and refused.retry_after == pytest.approx(5)
    assert hit(10.5).allowed  # the first request left the window
    assert not hit(11).allowed


def test_the_limit_cannot_be_set_below_a_batch_of_five():
    with pytest.raises(ValueError):
        WebSettings(admit_limit=4)


# -- operators ----------------------------------------------------------------------------------


def test_operator_routes_queues_workers_dead_letters(client, ops, alice, conn):
    client.post("/api/analyses", json=alice.analysis(), headers=alice.auth)
    client.post(f"/api/analyses/1/delta", headers=alice.auth)
    query(conn, "UPDATE citeq_messages SET state = 'dead', dead_reason = 'boom', finished_at = now()")
    queues = client.get("/api/ops/queues", headers=ops).json()
    assert {q["queue_name"]: q["dead"] for q in queues}["analysis"] == 2
    assert isinstance(client.get("/api/ops/workers", headers=ops).json(), list)
    letters = client.get("/api/ops/dead-letters", headers=ops).json()
    assert len(letters) == 2 and letters[0]["actor_name"] == "analyze"
    assert client.post(f"/api/ops/dead-letters/{letters[0]['id']}/retry", headers=ops).json() == {"retried": 1}
    assert client.post(f"/api/ops/dead-letters/{letters[0]['id']}/retry", headers=ops).status_code == 404
    assert client.delete(f"/api/ops/dead-letters/{letters[1]['id']}", headers=ops).json() == {"purged": 1}
    assert client.delete(f"/api/ops/dead-letters/{letters[1]['id']}", headers=ops).status_code == 404
    assert query(conn, "SELECT state::text, count(*) FROM citeq_messages GROUP BY 1") == [("queued", 1)]
    assert len(client.get("/api/ops/analyses", headers=ops).json()) == 2


# -- uploads -------------------------------------------------------------------------------------


@pytest.mark.skipif(not HAS_UPLOADS, reason="the parsing pipeline (analysis.pipeline.intake.uploads) is not installed")
def test_upload_answers_202_with_the_job_to_poll(client, alice):
    thesis = (ROOT / "sample_data" / "thesis_urban_heat.pdf").read_bytes()
    r = client.post("/api/uploads", files=[("files", ("thesis_urban_heat.pdf", thesis, "application/pdf")),
                                           ("files", ("notes.txt", b"some notes", "text/plain"))],
                    headers=alice.auth)
    assert r.status_code == 202, r.text
    assert r.headers["location"] == f"/api/uploads/{r.json()['jobId']}"
    status = client.get(f"/api/uploads/{r.json()['jobId']}", headers=alice.auth).json()
    assert [(i["filename"], i["kind"]) for i in status["items"]] == [("thesis_urban_heat.pdf", "thesis"),
                                                                       ("notes.txt", "source")]
    assert client.get("/api/uploads/999999", headers=alice.auth).status_code == 404


@pytest.mark.skipif(not HAS_UPLOADS, reason="the parsing pipeline (analysis.pipeline.intake.uploads) is not installed")
def test_upload_refusals(client, alice, conn):
    r = client.post("/api/uploads", json={"files": []}, headers=alice.auth)
    assert (r.status_code, r.json()["error"]["code"]) == (415, "unsupported_media_type")
    r = client.post("/api/uploads", files=[("files", ("big.pdf", b"x" * 70_000, "application/pdf"))],
                    headers=alice.auth)
    assert (r.status_code, r.json()["error"]["code"]) == (413, "payload_too_large")
    r = client.post("/api/uploads", data={"kind": "thesis"}, files=[("other", ("a.txt", b"a", "text/plain"))],
                    headers=alice.auth)
    assert (r.status_code, r.json()["error"]["code"]) == (422, "empty_upload")
    r = client.post("/api/uploads", data={"kind": "poem"}, files=[("files", ("a.txt", b"a", "text/plain"))],
                    headers=alice.auth)
    assert r.status_code == 422
    for field, values in (("session_id", ["1", "2"]), ("kind", ["thesis", "thesis"])):
        # one value each: a repeated one is refused, not read as its first or last
        r = client.post("/api/uploads", data={field: values}, files=[("files", ("a.txt", b"a", "text/plain"))],
                        headers=alice.auth)
        assert (r.status_code, r.json()["error"]) == (422, {"code": "invalid_request", "field": field,
                                                            "message": f"{field} is given more than once"})
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


def test_a_repeated_query_parameter_is_refused_not_read_as_its_last_value(client, alice, ops):
    assert client.get("/api/analyses?limit=5", headers=alice.auth).status_code == 200
    for path, auth in (("/api/analyses?limit=5&limit=0", alice.auth),
                       ("/api/ops/dead-letters?queue=a&limit=1&queue=b", ops)):
        r = client.get(path, headers=auth)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "invalid_request"
        assert r.json()["error"]["parameter"] in ("limit", "queue")


# -- the rest -----------------------------------------------------------------------------------


def test_openapi_dashboard_health_and_metrics(client, alice):
    client.post("/api/analyses", json=alice.analysis(), headers=alice.auth)
    spec = client.get("/openapi.json").json()
    assert "/api/analyses" in spec["paths"] and "requestBody" in spec["paths"]["/api/analyses"]["post"]
    assert client.get("/").headers["content-type"].startswith("text/html")
    assert client.get("/healthz").json() == {"ok": True}
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert 'citeq_analysis_jobs{state="pending"} 1' in text
    assert "citeq_jobs_admitted_total 1" in text
    assert 'citeq_job_wait_seconds_bucket{le="+Inf"} 0' in text
    assert '# TYPE citeq_job_run_seconds histogram' in text
    assert 'citeq_queue_messages{queue="analysis",state="ready"} 1' in text


def test_head_is_answered_as_get_without_the_body(client, alice):
    client.post("/api/analyses", json=alice.analysis(), headers=alice.auth)
    for path, headers in (("/healthz", {}), ("/openapi.json", {}), ("/api/analyses", alice.auth),
                          ("/api/analyses", {})):
        got, head = client.get(path, headers=headers), client.head(path, headers=headers)
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        for name in ("content-length", "content-type", "content-encoding"):  # the GET's, compression included
            assert head.headers.get(name) == got.headers.get(name), (path, name)
    refused = client.head("/api/ops/dead-letters/retry", headers=alice.auth)  # POST only
    assert refused.status_code == 405 and "HEAD" not in refused.headers["allow"]
    assert client.delete("/healthz").headers["allow"] == "GET, HEAD"


def test_an_upload_with_a_malformed_doi_is_refused_and_stages_nothing(client, alice, conn):
    staged = query(conn, "SELECT count(*) FROM parse_items")[0][0]
    r = client.post("/api/uploads", data={"dois": ["null"]},
                    files=[("files", ("source_a.txt", b"some text", "text/plain"))], headers=alice.auth)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_doi", r.text
    r = client.post("/api/uploads", data={"dois": ["10.5555/abc.1"]},
                    files=[("files", ("source_a.txt", b"some text", "text/plain"))], headers=alice.auth)
    assert r.status_code == 202, r.text
    assert query(conn, "SELECT count(*) FROM parse_items")[0][0] == staged + 1
