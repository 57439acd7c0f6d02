"""Hostile input at every entry point (HTTP, CLI, the Python API) gets a typed error, never a 500.

Every limit comes from analysis/inputs.py, so each case is tried at each entry point that
takes the field, and each refusal writes nothing.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from analysis.settings import PipelineSettings, QueueSettings
from analysis import inputs
from analysis.queue import userqueue
from analysis.surface import accounts
from analysis.errors import AdmissionError, InvalidInput
from citeq import cli
from tests.conftest import query
from tests.integration.conftest import add_documents
from web.app import create_app
from web.settings import WebSettings

BIG = 2**63  # one past PostgreSQL's bigint
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client(queue_broker):
    settings = WebSettings(admit_limit=100, upload_limit=100, max_upload_bytes=1 << 20)
    with TestClient(create_app(broker=queue_broker, settings=settings), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def alice(queue_broker, conn):
    user_id = accounts.create(queue_broker, "alice", credits=10)
    thesis, sources = add_documents(conn, user_id)
    return {"id": user_id, "thesis": thesis, "sources": sources,
            "auth": {"Authorization": f"Bearer {accounts.mint_token(queue_broker, user_id)}"}}


@pytest.fixture
def ops(queue_broker):
    return {"Authorization": f"Bearer {accounts.mint_token(queue_broker, None, operator=True)}"}


def refused_422(r) -> dict:
    assert r.status_code == 422, (r.status_code, r.text)
    body = r.json()
    assert body["error"]["code"] == "invalid_request", body
    return body


def nothing_written(conn, user_id: int) -> None:
    assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 0
    assert query(conn, "SELECT credits FROM accounts WHERE user_id = %s", user_id)[0][0] == 10


# -- HTTP: bodies ----------------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    {"thesis_id": BIG, "source_ids": [1]},
    {"thesis_id": 1, "source_ids": [BIG]},
    {"thesis_id": 1, "source_ids": [1], "idempotency_key": "a\x00b"},
    {"thesis_id": 1, "source_ids": [1], "options": {"k": "a\x00b"}},
    {"thesis_id": 1, "source_ids": [1], "options": {"a\x00": 1}},
    {"thesis_id": 1, "source_ids": [1], "options": {"deep": [[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]}},
])
def test_out_of_range_ids_and_nul_bytes_in_an_admission_are_422(client, alice, conn, body):
    r = client.post("/api/analyses", content=json.dumps(body).encode(), headers={**alice["auth"], **JSON})
    refused_422(r)
    nothing_written(conn, alice["id"])


@pytest.mark.parametrize("raw", [
    b'{"thesis_id": 1, "source_ids": [1], "idempotency_key": "\\ud800"}',
    b'{"thesis_id": 1, "source_ids": [1], "options": {"k": "\\udfff x"}}',
    b'{"thesis_id": 1, "source_ids": [1], "options": {"k": NaN}}',
    # the invalid field's input is a lone surrogate: the error must not try to echo it
    b'{"thesis_id": "\\ud800", "source_ids": [1]}',
    b'{"thesis_id": 1, "source_ids": ["\\udc80"]}',
])
def test_lone_surrogates_are_422_and_never_echoed(client, alice, conn, raw):
    r = client.post("/api/analyses", content=raw, headers={**alice["auth"], **JSON})
    body = refused_422(r)
    assert "\\ud" not in r.text.lower() or "errors" in body["error"]
    nothing_written(conn, alice["id"])


def test_a_delta_with_bad_ids_is_422(client, alice, conn):
    job = client.post("/api/analyses", json={"thesis_id": alice["thesis"], "source_ids": alice["sources"]},
                      headers=alice["auth"]).json()
    refused_422(client.post(f"/api/analyses/{job['id']}/delta", json={"source_ids": [BIG]}, headers=alice["auth"]))
    refused_422(client.post(f"/api/analyses/{BIG}/delta", headers=alice["auth"]))


# -- HTTP: paths and queries ---------------------------------------------------------------------

@pytest.mark.parametrize("method,path", [
    ("get", f"/api/analyses/{BIG}"), ("post", f"/api/analyses/{BIG}/cancel"),
    ("get", f"/api/uploads/{BIG}"), ("get", f"/api/analyses/{10**30}"), ("get", "/api/analyses/0"),
])
def test_ids_beyond_bigint_in_paths_are_422(client, alice, method, path):
    refused_422(client.request(method, path, headers=alice["auth"]))


@pytest.mark.parametrize("method,path", [
    ("post", f"/api/ops/dead-letters/{BIG}/retry"), ("delete", f"/api/ops/dead-letters/{BIG}"),
    ("get", "/api/ops/dead-letters?queue=a%00b"),
])
def test_operator_routes_refuse_bad_ids_and_nul(client, ops, method, path):
    refused_422(client.request(method, path, headers=ops))


# -- HTTP: uploads ---------------------------------------------------------------------------------

def upload(client, alice, files=None, data=None):
    files = files or [("files", ("a.txt", b"some text", "text/plain"))]
    return client.post("/api/uploads", files=files, data=data or {}, headers=alice["auth"])


def raw_upload(client, alice, filename: bytes, data: bytes = b"text"):
    """A multipart body built by hand: clients percent-encode what a hostile one sends raw."""
    body = (b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + filename
            + b"\"\r\nContent-Type: text/plain\r\n\r\n" + data + b"\r\n--BOUNDARY--\r\n")
    return client.post("/api/uploads", content=body,
                       headers={**alice["auth"], "Content-Type": "multipart/form-data; boundary=BOUNDARY"})


@pytest.mark.parametrize("filename", [b"a\x00b.txt", b"x" * 256 + b".txt", b"bad\xff\xfe.txt", "\u00e9".encode() * 256])
def test_bad_file_names_are_422(client, alice, conn, filename):
    refused_422(raw_upload(client, alice, filename))
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


def test_a_good_raw_file_name_is_staged(client, alice):
    r = raw_upload(client, alice, "th\u00e8se.txt".encode())
    assert r.status_code == 202, r.text


@pytest.mark.parametrize("doi", ["10.1234/" + "x" * 300, "10.1234/a\x00b"])
def test_bad_dois_are_422(client, alice, conn, doi):
    refused_422(upload(client, alice, data={"dois": [doi]}))
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


@pytest.mark.parametrize("session", ["\u0663", "\u00b2", str(BIG), "0", "-1", "1.5", "x"])
def test_session_ids_must_be_ascii_digits_in_range(client, alice, conn, session):
    refused_422(upload(client, alice, data={"session_id": session}))
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


# -- the Python API -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"idempotency_key": "k" * 10_000},
    {"idempotency_key": "a\x00"},
    {"idempotency_key": "\udcff"},
    {"options": {"k": "\x00"}},
    {"thesis_id": BIG},
    {"source_ids": [BIG]},
    {"delta_of_job_id": BIG},
])
def test_admit_refuses_bad_input_with_a_typed_error(queue_broker, alice, conn, kwargs):
    args = {"thesis_id": alice["thesis"], "source_ids": alice["sources"], **kwargs}
    with pytest.raises(InvalidInput) as raised:
        userqueue.admit(alice["id"], args.pop("thesis_id"), args.pop("source_ids"), broker=queue_broker,
                        settings=QueueSettings(), **args)
    assert isinstance(raised.value, AdmissionError) and raised.value.code == "invalid_request"
    nothing_written(conn, alice["id"])


def test_admit_refuses_a_user_id_beyond_bigint(queue_broker, alice):
    with pytest.raises(InvalidInput):
        userqueue.admit(BIG, alice["thesis"], alice["sources"], broker=queue_broker, settings=QueueSettings())


def test_stage_upload_refuses_bad_names_with_a_typed_error(queue_broker, alice, conn):
    from analysis.pipeline.intake import uploads

    for name in ["a\x00.txt", "\udcff.txt", "x" * 300]:
        with pytest.raises(InvalidInput):
            uploads.stage_upload(alice["id"], [{"filename": name, "data": b"x"}],
                                 broker=queue_broker, settings=PipelineSettings())
    with pytest.raises(InvalidInput):
        uploads.stage_upload(alice["id"], [{"filename": "a.txt", "data": b"x"}], session_id=BIG, broker=queue_broker,
                             settings=PipelineSettings())
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


def test_the_limits_are_one_set_of_numbers():
    assert inputs.ID_MAX == 2**63 - 1
    assert (inputs.FILENAME_MAX, inputs.DOI_MAX, inputs.IDEMPOTENCY_KEY_MAX) == (255, 300, 200)
    assert inputs.parse_id("42") == 42
    for bad in ["\u0663", "\u00b2", "0", str(BIG), "-3", " "]:
        with pytest.raises(ValueError):
            inputs.parse_id(bad)


# -- the CLI -----------------------------------------------------------------------------------

@pytest.fixture
def run(queue_broker, capsys):
    def run(*argv: str):
        capsys.readouterr()
        try:
            status = cli.main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code
        out, err = capsys.readouterr()
        return status, out, err
    return run


def test_cli_refuses_a_long_idempotency_key_as_invalid_not_database_unavailable(run, alice, conn):
    src = [a for s in alice["sources"] for a in ("--source", str(s))]
    status, _, err = run("analyze", "alice", "--thesis", str(alice["thesis"]), *src,
                         "--idempotency-key", "k" * 10_000)
    assert status == 1 and "invalid_request" in err, err
    status, _, err = run("analyze", "alice", "--thesis", str(alice["thesis"]), *src, "--option", "a=\udcff")
    assert status == 1 and "invalid_request" in err, err
    nothing_written(conn, alice["id"])


@pytest.mark.parametrize("argv", [
    ("job", str(BIG)), ("cancel", str(BIG)), ("dead", "retry", str(BIG)), ("dead", "purge", "--id", str(BIG)),
    ("analyze", "alice", "--thesis", str(BIG), "--source", "1"), ("upload", "alice", "x.txt", "--session", str(BIG)),
    ("job", "\u0663"),
])
def test_cli_ids_beyond_bigint_are_usage_errors(run, alice, argv):
    status, _, err = run(*argv)
    assert status == 2 and "id is a whole number" in err, err


def test_cli_upload_refuses_an_undecodable_file_name(run, alice, tmp_path, conn):
    bad = tmp_path / "bad\udcff.txt"  # a file name that is not UTF-8, as argv hands it over
    bad.write_bytes(b"some text")
    status, _, err = run("upload", "alice", str(bad))
    assert status == 1 and "invalid_request" in err, err
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0
